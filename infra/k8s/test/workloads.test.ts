/**
 * What the schemas cannot say: every workload is probed, runs non-root on a read-only root filesystem, mounts a token
 * only where it talks to the API server, and every reference between objects (selectors, ConfigMaps, Secrets,
 * ServiceAccounts, Roles, scale targets) lands on an object that is rendered.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { migrationFiles, migrationsJobName } from '../src/migrations.ts';
import { productionOverlay } from '../src/overlay.ts';
import { DATABASE_SERVICES, NODE_FLAGS, WORKLOAD_SPECS, WORKLOADS } from '../src/workloads.ts';
import { named, ofKind, overlayNames, rendered, selects, type Plain } from './rendered-objects.ts';

const podTemplates = (name: (typeof overlayNames)[number]) =>
  [...ofKind(rendered[name], 'Deployment'), ...ofKind(rendered[name], 'StatefulSet'), ...ofKind(rendered[name], 'Job')].map((owner) => ({ owner, pod: owner.spec.template as Plain }));

describe.each(overlayNames)('%s overlay', (name) => {
  const render = rendered[name];

  it('renders a Deployment for every workload, with both probes on the http port', () => {
    expect(ofKind(render, 'Deployment').map((d) => d.metadata.name).sort()).toEqual([...WORKLOADS].sort());
    for (const deployment of ofKind(render, 'Deployment')) {
      const container = deployment.spec.template.spec.containers[0];
      expect(container.livenessProbe?.httpGet, deployment.metadata.name).toMatchObject({ path: '/healthz', port: 'http' });
      expect(container.readinessProbe?.httpGet, deployment.metadata.name).toMatchObject({ path: '/readyz', port: 'http' });
      expect(container.ports.map((port: Plain) => port.name)).toContain('http');
      expect(container.command.at(-1)).toBe(WORKLOAD_SPECS[deployment.metadata.name as keyof typeof WORKLOAD_SPECS].entry);
    }
  });

  it('runs every pod non-root, without privilege escalation, on a read-only root filesystem, with limits', () => {
    for (const { owner, pod } of podTemplates(name)) {
      const label = `${owner.kind}/${owner.metadata.name}`;
      expect(pod.spec.securityContext?.runAsNonRoot, label).toBe(true);
      expect(pod.spec.securityContext?.runAsUser, label).toBeGreaterThan(0);
      // Pod Security "restricted", which the platform's namespace enforces, also asks for a seccomp profile.
      expect(pod.spec.securityContext?.seccompProfile?.type, label).toBe('RuntimeDefault');
      for (const container of pod.spec.containers) {
        expect(container.securityContext, label).toMatchObject({ runAsNonRoot: true, readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } });
        expect(container.resources?.limits?.memory, label).toBeDefined();
        expect(container.resources?.requests?.memory, label).toBeDefined();
      }
    }
  });

  it('gives every workload a writable /tmp (an emptyDir), and the mover its MOVER_TEMP_DIR inside it', () => {
    for (const deployment of ofKind(render, 'Deployment')) {
      const { containers, volumes } = deployment.spec.template.spec;
      const mount = containers[0].volumeMounts.find((m: Plain) => m.mountPath === '/tmp');
      expect(volumes.find((v: Plain) => v.name === mount?.name)?.emptyDir, deployment.metadata.name).toBeDefined();
    }
    const mover = named(render, 'ConfigMap', 'mover-config');
    expect(mover?.data.MOVER_TEMP_DIR).toMatch(/^\/tmp\//);
  });

  it('mounts a service-account token only in the sandbox service and the controller', () => {
    const withToken = ofKind(render, 'Deployment').filter((d) => d.spec.template.spec.automountServiceAccountToken !== false).map((d) => d.metadata.name);
    expect(withToken.sort()).toEqual(['sandbox', 'strata-controller']);
    for (const { pod } of podTemplates(name)) {
      const account = pod.spec.serviceAccountName;
      expect(named(render, 'ServiceAccount', account), account).toBeDefined();
    }
  });

  it("matches every selector to the pod labels of what it selects", () => {
    for (const owner of [...ofKind(render, 'Deployment'), ...ofKind(render, 'StatefulSet')]) {
      expect(selects(owner.spec.selector.matchLabels, owner.spec.template.metadata.labels), owner.metadata.name).toBe(true);
    }
    const templates = podTemplates(name).map(({ pod }) => pod);
    for (const service of ofKind(render, 'Service')) {
      const targets = templates.filter((pod) => selects(service.spec.selector, pod.metadata.labels));
      expect(targets.length, `Service ${service.metadata.name}`).toBe(1);
      const portNames = targets[0]?.spec.containers.flatMap((c: Plain) => c.ports.map((p: Plain) => p.name));
      for (const port of service.spec.ports) expect(portNames, `Service ${service.metadata.name}`).toContain(port.targetPort);
    }
    for (const budget of ofKind(render, 'PodDisruptionBudget')) {
      expect(templates.filter((pod) => selects(budget.spec.selector.matchLabels, pod.metadata.labels)).length, `PDB ${budget.metadata.name}`).toBe(1);
    }
  });

  it('points every autoscaler at a rendered Deployment that leaves its replicas to it', () => {
    const autoscalers = ofKind(render, 'HorizontalPodAutoscaler');
    expect(autoscalers.length).toBe(WORKLOADS.filter((w) => WORKLOAD_SPECS[w].scalesOut).length);
    for (const autoscaler of autoscalers) {
      const target = named(render, autoscaler.spec.scaleTargetRef.kind, autoscaler.spec.scaleTargetRef.name);
      expect(target?.apiVersion, autoscaler.metadata.name).toBe(autoscaler.spec.scaleTargetRef.apiVersion);
      expect(target?.spec.replicas, autoscaler.metadata.name).toBeUndefined();
      expect(target?.spec.template.spec.containers[0].resources.requests.cpu, 'a CPU target needs a CPU request').toBeDefined();
      expect(autoscaler.spec.minReplicas).toBeLessThanOrEqual(autoscaler.spec.maxReplicas);
    }
  });

  it('binds every Role and ClusterRole that is rendered, to a rendered ServiceAccount', () => {
    for (const binding of [...ofKind(render, 'RoleBinding'), ...ofKind(render, 'ClusterRoleBinding')]) {
      const role = ofKind(render, binding.roleRef.kind).find((r) => r.metadata.name === binding.roleRef.name && r.metadata.namespace === binding.metadata.namespace);
      expect(role, `${binding.kind} ${binding.metadata.name}`).toBeDefined();
      for (const subject of binding.subjects) expect(named(render, 'ServiceAccount', subject.name)?.metadata.namespace).toBe(subject.namespace);
    }
    expect(ofKind(render, 'Role').some((role) => role.metadata.namespace === render.overlay.sandboxNamespace)).toBe(true);
    expect(ofKind(render, 'ClusterRole').some((role) => role.rules.some((rule: Plain) => rule.resources.includes('nodes/proxy') && rule.verbs.join() === 'get'))).toBe(true);
    const controllerRoles = [...ofKind(render, 'Role'), ...ofKind(render, 'ClusterRole')].filter((role) => role.rules.some((rule: Plain) => rule.apiGroups.includes('backups.strata.dev')));
    expect(controllerRoles.length).toBe(Math.max(1, render.overlay.controllerWatchNamespaces.length));
  });

  it('runs the migrations of every database in one Job, each from its own database Secret', () => {
    const [job, ...others] = ofKind(render, 'Job');
    expect(others).toEqual([]);
    expect(job?.metadata.name).toMatch(/^migrations-[0-9a-f]{10}$/);
    expect(job?.spec.template.spec.containers.map((c: Plain) => c.command.at(-1)).sort()).toEqual([...DATABASE_SERVICES].sort());
    for (const container of job?.spec.template.spec.containers ?? []) {
      expect(container.env[0].valueFrom.secretKeyRef).toEqual({ name: `${container.name}-database`, key: 'url' });
    }
  });

  it('renders NATS as a StatefulSet of the overlay\'s size', () => {
    const nats = named(render, 'StatefulSet', 'nats');
    expect(nats?.spec.replicas).toBe(render.overlay.nats.mode === 'in-cluster' ? render.overlay.nats.replicas : undefined);
    expect(nats?.spec.volumeClaimTemplates[0].spec.resources.requests.storage).toBeDefined();
  });
});

describe('the migrations Job name', () => {
  it('changes with the release and with the migrations, not otherwise', () => {
    expect(migrationFiles().length).toBeGreaterThan(DATABASE_SERVICES.length);
    expect(migrationsJobName(productionOverlay)).toBe(migrationsJobName({ ...productionOverlay }));
    expect(migrationsJobName({ ...productionOverlay, image: { ...productionOverlay.image, tag: '0.1.1' } })).not.toBe(migrationsJobName(productionOverlay));
  });
});

describe('the V8 flags', () => {
  it('are the local stack\'s, with which docs/benchmarks.md measured the memory the pods are sized by', async () => {
    // By file path: infra/local's package entry loads the whole stack; only its flags are compared.
    const flagsFile = pathToFileURL(path.resolve(import.meta.dirname, '../../local/src/node-flags.ts')).href;
    const { serviceNodeFlags } = (await import(flagsFile)) as { serviceNodeFlags: (service?: string) => string[] };
    const override = process.env.STACK_NODE_FLAGS;
    delete process.env.STACK_NODE_FLAGS;
    try {
      for (const workload of WORKLOADS) expect(NODE_FLAGS[workload], workload).toEqual(serviceNodeFlags(workload));
    } finally {
      if (override !== undefined) process.env.STACK_NODE_FLAGS = override;
    }
  });
});
