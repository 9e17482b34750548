/**
 * The objects of one sandbox in Kubernetes: a Secret with the admin's credentials, a Pod running the official image
 * (`postgres:<major>` or `mariadb:11`) with its data on an `emptyDir` or on a claim of a storage class, and a
 * ClusterIP Service in front of it. All share one name, `strata-sbx-<id>`, and the sandbox label.
 *
 * The Secret owns the others (owner references): it lives as long as the sandbox, also while it is stopped, so
 * deleting it is how a sandbox is wiped, and Kubernetes' garbage collector deletes the pod, service and claim.
 */
import { randomBytes } from 'node:crypto';
import type { V1EnvVar, V1OwnerReference, V1PersistentVolumeClaim, V1Pod, V1Probe, V1ResourceRequirements, V1Secret, V1Service, V1Volume, V1VolumeMount } from '@kubernetes/client-node';
import { formatQuantity } from '../quantity.ts';
import { quote } from './mariadb.ts';
import type { ServerSpec } from './types.ts';

export const SANDBOX_LABEL = 'backups.strata.dev/sandbox';
export const DATA_VOLUME = 'data';
const APP_LABEL = 'app.kubernetes.io/name';
const MYSQL_INIT_SCRIPT = 'admin-grants.sql';

export interface ObjectSettings {
  image: string;
  /** A claim of this class holds the data instead of the node's scratch space. */
  storageClass?: string;
  sizeLimitBytes?: number;
  cpu?: string;
  memory?: string;
}

export const SERVER_PORTS: Record<ServerSpec['engine'], number> = { postgres: 5432, mysql: 3306 };

/** Sandbox ids (`sbx_…`) carry an underscore, which Kubernetes names do not allow. */
export function objectName(id: string): string {
  return `strata-sbx-${id.toLowerCase().replace(/[^a-z0-9-]/g, '-')}`.slice(0, 63).replace(/-+$/, '');
}

/** The claim of a storage class is a standalone object, so that it outlives the pod (an ephemeral one would not). */
export function claimName(name: string): string {
  return `${name}-${DATA_VOLUME}`;
}

/** A claim needs a size; a sandbox without a limit gets this one. */
export const DEFAULT_CLAIM_BYTES = 10 * 1024 ** 3;

export function defaultImage(spec: ServerSpec): string {
  return spec.engine === 'postgres' ? `postgres:${spec.major}` : 'mariadb:11';
}

function labelsOf(spec: ServerSpec): Record<string, string> {
  return { [APP_LABEL]: 'strata-sandbox', [SANDBOX_LABEL]: spec.id };
}

function metadataOf(spec: ServerSpec, name = objectName(spec.id), owner?: V1OwnerReference) {
  return { name, labels: labelsOf(spec), ...(owner ? { ownerReferences: [owner] } : {}) };
}

/**
 * The reference each dependent object carries to the sandbox's Secret. No `blockOwnerDeletion`: the runtime deletes
 * in the background, and setting it would need `update` on `secrets/finalizers` where the admission plugin
 * OwnerReferencesPermissionEnforcement is on.
 */
export function ownerReference(secret: { metadata?: { name?: string; uid?: string } }): V1OwnerReference {
  const { name, uid } = secret.metadata ?? {};
  if (!name || !uid) throw new Error('the sandbox secret has no name or uid to own its objects by');
  return { apiVersion: 'v1', kind: 'Secret', name, uid };
}


/** The image's own variables; MARIADB_USER only gets its own database, hence a grant script like the local runtime's. */
function engineCredentials(spec: ServerSpec): Record<string, string> {
  if (spec.engine === 'postgres') return { POSTGRES_USER: spec.username, POSTGRES_PASSWORD: spec.password, POSTGRES_DB: 'postgres' };
  return {
    MARIADB_USER: spec.username,
    MARIADB_PASSWORD: spec.password,
    // Ours rather than MARIADB_RANDOM_ROOT_PASSWORD, which the image prints to the pod's log.
    MARIADB_ROOT_PASSWORD: randomBytes(24).toString('base64url'),
    [MYSQL_INIT_SCRIPT]: `GRANT ALL PRIVILEGES ON *.* TO ${quote(spec.username)}@'%' WITH GRANT OPTION;\n`,
  };
}

export function secretManifest(spec: ServerSpec): V1Secret {
  return { apiVersion: 'v1', kind: 'Secret', metadata: metadataOf(spec), type: 'Opaque', stringData: { username: spec.username, password: spec.password, ...engineCredentials(spec) } };
}

export function serviceManifest(spec: ServerSpec, owner: V1OwnerReference): V1Service {
  const port = SERVER_PORTS[spec.engine];
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: metadataOf(spec, objectName(spec.id), owner),
    spec: { type: 'ClusterIP', selector: { [SANDBOX_LABEL]: spec.id }, ports: [{ name: spec.engine, port, targetPort: port, protocol: 'TCP' }] },
  };
}

/** The claim requests the sandbox's size limit: the volume the provisioner makes is that size (or rounded up). */
export function claimManifest(spec: ServerSpec, settings: ObjectSettings & { storageClass: string }, owner: V1OwnerReference): V1PersistentVolumeClaim {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: metadataOf(spec, claimName(objectName(spec.id)), owner),
    spec: { accessModes: ['ReadWriteOnce'], storageClassName: settings.storageClass, resources: { requests: { storage: formatQuantity(settings.sizeLimitBytes ?? DEFAULT_CLAIM_BYTES) } } },
  };
}

function secretEnv(spec: ServerSpec, keys: string[]): V1EnvVar[] {
  return keys.map((key) => ({ name: key, valueFrom: { secretKeyRef: { name: objectName(spec.id), key } } }));
}

interface EngineContainer {
  env: V1EnvVar[];
  args: string[];
  dataPath: string;
  readinessProbe: V1Probe;
  extraMounts: V1VolumeMount[];
  extraVolumes: V1Volume[];
}

const PROBE_TIMING = { periodSeconds: 2, timeoutSeconds: 2, failureThreshold: 3 };

/**
 * The volume is mounted above PGDATA: a claim's root may hold `lost+found`, which initdb refuses, and postgres 18+
 * images refuse a mount at the old `/var/lib/postgresql/data`. The probe uses TCP on loopback because the image's
 * first-run server listens on the socket only, so the pod is not Ready before its initialisation ends.
 */
function postgresContainer(spec: ServerSpec): EngineContainer {
  return {
    env: [...secretEnv(spec, ['POSTGRES_USER', 'POSTGRES_PASSWORD', 'POSTGRES_DB']), { name: 'PGDATA', value: '/var/lib/postgresql/sandbox/pgdata' }],
    args: ['postgres', '-c', 'fsync=off', '-c', 'full_page_writes=off', '-c', 'synchronous_commit=off'],
    dataPath: '/var/lib/postgresql/sandbox',
    readinessProbe: { exec: { command: ['sh', '-c', 'pg_isready -h 127.0.0.1 -p 5432 -U "$POSTGRES_USER" -d postgres'] }, ...PROBE_TIMING },
    extraMounts: [],
    extraVolumes: [],
  };
}

/** `mariadb-admin ping` succeeds even when access is denied, so it needs no credentials. */
function mysqlContainer(spec: ServerSpec): EngineContainer {
  return {
    env: secretEnv(spec, ['MARIADB_USER', 'MARIADB_PASSWORD', 'MARIADB_ROOT_PASSWORD']),
    args: ['--skip-log-bin', '--skip-name-resolve', '--innodb-flush-log-at-trx-commit=0', '--max-allowed-packet=256M'],
    dataPath: '/var/lib/mysql',
    readinessProbe: { exec: { command: ['mariadb-admin', 'ping', '-h', '127.0.0.1', '--silent'] }, ...PROBE_TIMING },
    extraMounts: [{ name: 'init', mountPath: '/docker-entrypoint-initdb.d', readOnly: true }],
    extraVolumes: [{ name: 'init', secret: { secretName: objectName(spec.id), items: [{ key: MYSQL_INIT_SCRIPT, path: MYSQL_INIT_SCRIPT }] } }],
  };
}

function dataVolume(spec: ServerSpec, settings: ObjectSettings): V1Volume {
  if (settings.storageClass) return { name: DATA_VOLUME, persistentVolumeClaim: { claimName: claimName(objectName(spec.id)) } };
  return { name: DATA_VOLUME, emptyDir: settings.sizeLimitBytes ? { sizeLimit: formatQuantity(settings.sizeLimitBytes) } : {} };
}

function resourcesOf(settings: ObjectSettings): V1ResourceRequirements | undefined {
  const amounts = { ...(settings.cpu ? { cpu: settings.cpu } : {}), ...(settings.memory ? { memory: settings.memory } : {}) };
  return Object.keys(amounts).length ? { requests: amounts, limits: amounts } : undefined;
}

export function podManifest(spec: ServerSpec, settings: ObjectSettings, owner: V1OwnerReference): V1Pod {
  const engine = spec.engine === 'postgres' ? postgresContainer(spec) : mysqlContainer(spec);
  const port = SERVER_PORTS[spec.engine];
  const resources = resourcesOf(settings);
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: metadataOf(spec, objectName(spec.id), owner),
    spec: {
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      containers: [{
        name: 'server',
        image: settings.image,
        args: engine.args,
        env: engine.env,
        ports: [{ name: spec.engine, containerPort: port, protocol: 'TCP' }],
        readinessProbe: engine.readinessProbe,
        ...(resources ? { resources } : {}),
        volumeMounts: [{ name: DATA_VOLUME, mountPath: engine.dataPath }, ...engine.extraMounts],
      }],
      volumes: [dataVolume(spec, settings), ...engine.extraVolumes],
    },
  };
}
