/**
 * Migrations as a Job applied before a rollout. Each service also applies pending migrations when it starts
 * (`migrate` in its main.ts, under a Postgres advisory lock), so the Job is what makes a schema change happen once,
 * before any new pod, and what a rollout waits for: `kubectl wait --for=condition=complete job/<name>`.
 *
 * The Job's name ends with a hash of the image and of every migration file: a release with new migrations is a new
 * Job (Jobs are immutable), and applying the same release again finds the finished Job and changes nothing.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Job } from 'kubernetes-models/batch/v1/Job';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { ServiceAccount } from 'kubernetes-models/v1/ServiceAccount';
import { labelsOf, RUN_AS, selectorOf } from './deployment.ts';
import { dependencyEgress, dnsEgress } from './network-policy.ts';
import { imageOf, type Overlay } from './overlay.ts';
import { databaseSecretOf } from './settings/index.ts';
import { DATABASE_SERVICES } from './workloads.ts';

export const MIGRATIONS = 'migrations';
const repoRoot = path.resolve(import.meta.dirname, '../../..');

/** The migration files of every database, sorted: what the Job applies. */
export function migrationFiles(): string[] {
  return DATABASE_SERVICES.flatMap((service) => {
    const dir = path.join('prisma', service, 'migrations');
    return readdirSync(path.join(repoRoot, dir), { recursive: true, encoding: 'utf8' })
      .filter((file) => file.endsWith('.sql'))
      .map((file) => path.join(dir, file))
      .sort();
  });
}

export function migrationsHash(overlay: Overlay): string {
  const hash = createHash('sha256').update(imageOf(overlay));
  for (const file of migrationFiles()) hash.update(file).update(readFileSync(path.join(repoRoot, file)));
  return hash.digest('hex').slice(0, 10);
}

export const migrationsJobName = (overlay: Overlay) => `${MIGRATIONS}-${migrationsHash(overlay)}`;

export function migrationObjects(overlay: Overlay) {
  const metadata = { name: MIGRATIONS, namespace: overlay.namespace, labels: labelsOf(MIGRATIONS, MIGRATIONS) };
  return [
    new ServiceAccount({ metadata, automountServiceAccountToken: false }),
    new NetworkPolicy({
      metadata,
      spec: { podSelector: { matchLabels: selectorOf(MIGRATIONS) }, policyTypes: ['Ingress', 'Egress'], ingress: [], egress: [dnsEgress, dependencyEgress(overlay, 'postgres')] },
    }),
    new Job({
      metadata: { ...metadata, name: migrationsJobName(overlay) },
      spec: {
        backoffLimit: 3,
        activeDeadlineSeconds: 900,
        ttlSecondsAfterFinished: 7 * 24 * 3600,
        template: {
          metadata: { labels: labelsOf(MIGRATIONS, MIGRATIONS) },
          spec: {
            restartPolicy: 'Never',
            serviceAccountName: MIGRATIONS,
            automountServiceAccountToken: false,
            enableServiceLinks: false,
            securityContext: { runAsNonRoot: true, runAsUser: RUN_AS, runAsGroup: RUN_AS, seccompProfile: { type: 'RuntimeDefault' } },
            // One container per database, side by side: the databases are independent and each run holds its lock.
            containers: DATABASE_SERVICES.map((service) => ({
              name: service,
              image: imageOf(overlay),
              imagePullPolicy: overlay.image.pullPolicy,
              workingDir: '/app',
              command: ['node', 'infra/k8s/scripts/migrate.ts', service],
              env: [{ name: 'DATABASE_URL', valueFrom: { secretKeyRef: { name: databaseSecretOf(service), key: 'url' } } }],
              resources: { requests: { cpu: '50m', memory: '96Mi' }, limits: { cpu: '500m', memory: '192Mi' } },
              securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, runAsNonRoot: true, capabilities: { drop: ['ALL'] } },
            })),
          },
        },
      },
    }),
  ];
}
