/** How the public reaches the gateway: an Ingress (production), or the gateway Service's NodePort (deployment.ts). */
import { Ingress } from 'kubernetes-models/networking.k8s.io/v1/Ingress';
import { labelsOf } from './deployment.ts';
import type { Overlay } from './overlay.ts';
import { HTTP_PORT } from './workloads.ts';

export function exposureObjects(overlay: Overlay) {
  const exposure = overlay.exposure;
  if (exposure.kind !== 'ingress') return [];
  return [
    new Ingress({
      metadata: { name: 'gateway', namespace: overlay.namespace, labels: labelsOf('gateway', 'edge') },
      spec: {
        ingressClassName: exposure.className,
        ...(exposure.tlsSecretName ? { tls: [{ hosts: [exposure.host], secretName: exposure.tlsSecretName }] } : {}),
        rules: [{ host: exposure.host, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'gateway', port: { number: HTTP_PORT } } } }] } }],
      },
    }),
  ];
}
