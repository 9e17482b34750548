// What `strata quickstart` writes: the resources that back up the local stack's own Postgres and MariaDB into its S3.
import YAML from 'yaml';

/** `stack.json`, written by the local stack in its state directory (infra/local/src/stack.ts). */
export interface StackFacts {
  gatewayUrl: string;
  /** `embedded`: the stack's own s3rver, which has no conditional writes. */
  s3: { endpoint: string; region: string; accessKey: string; secretKey: string; embedded: boolean };
  /** `demoDatabase`: the demo database the stack keeps in its own server (infra/local/src/demo.ts). */
  postgres: { url: string; demoDatabase?: string };
  mysql: { url: string; demoDatabase?: string };
}

export interface QuickstartOptions {
  namespace: string;
  bucket: string;
  /** The store's age key pair: the identity goes into a Secret, the recipient into the store. */
  identity: string;
  recipient: string;
  /** Databases of each target; empty means the stack's demo database where it has one, else every non-template database. */
  databases: { postgres: string[]; mysql: string[] };
}

interface Endpoint {
  host: string;
  port: number;
  username: string;
  password: string;
}

/** Host, port and credentials of a `postgres://` or `mysql://` URL. */
export function endpointOf(url: string, defaultPort: number): Endpoint {
  const parsed = new URL(url);
  return {
    host: parsed.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: parsed.port ? Number(parsed.port) : defaultPort,
    username: decodeURIComponent(parsed.username),
    password: decodeURIComponent(parsed.password),
  };
}

export const QUICKSTART_TARGETS = { postgres: 'postgres', mysql: 'mariadb' } as const;

/** The documents, in apply order: secrets, the store, a nightly policy, one target per engine. */
export function quickstartDocuments(facts: StackFacts, options: QuickstartOptions): object[] {
  const metadata = (name: string) => ({ name, namespace: options.namespace });
  const engines = [
    { engine: 'postgres' as const, name: QUICKSTART_TARGETS.postgres, endpoint: endpointOf(facts.postgres.url, 5432), databases: databasesOf(options.databases.postgres, facts.postgres) },
    { engine: 'mysql' as const, name: QUICKSTART_TARGETS.mysql, endpoint: endpointOf(facts.mysql.url, 3306), databases: databasesOf(options.databases.mysql, facts.mysql) },
  ];
  return [
    { apiVersion: 'v1', kind: 'Secret', metadata: metadata('quickstart-s3'), stringData: { accessKeyId: facts.s3.accessKey, secretAccessKey: facts.s3.secretKey } },
    { apiVersion: 'v1', kind: 'Secret', metadata: metadata('quickstart-age'), stringData: { identity: options.identity } },
    ...engines.map(({ name, endpoint }) => ({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: metadata(`${name}-credentials`),
      stringData: { username: endpoint.username, password: endpoint.password },
    })),
    {
      apiVersion: 'backups.strata.dev/v1alpha1',
      kind: 'BackupStore',
      metadata: metadata('local'),
      spec: {
        s3: {
          endpoint: facts.s3.endpoint,
          region: facts.s3.region,
          bucket: options.bucket,
          // The stack's S3 answers on an address, not a DNS name: buckets go in the path.
          pathStyle: true,
          // The embedded S3 (s3rver) does not implement conditional writes.
          disableConditionalPut: facts.s3.embedded,
          credentialsSecret: { name: 'quickstart-s3' },
        },
        encryption: { ageRecipients: [options.recipient], identitySecret: { name: 'quickstart-age' } },
      },
    },
    {
      apiVersion: 'backups.strata.dev/v1alpha1',
      kind: 'BackupPolicy',
      metadata: metadata('nightly'),
      // Change capture on: a Postgres target whose user may replicate restores to any second of its window.
      // `newest: 5`: daily keeps one backup a day, so a first backup, a migration and a second backup on the same day
      // would leave only the second, and there would be nothing to diff it against.
      spec: { store: 'local', full: { schedule: '0 3 * * *' }, retain: { newest: 5, daily: 7, weekly: 4 }, pitr: { enabled: true, partialInterval: '10s' } },
    },
    ...engines.map(({ engine, name, endpoint, databases }) => ({
      apiVersion: 'backups.strata.dev/v1alpha1',
      kind: 'BackupTarget',
      metadata: metadata(name),
      spec: {
        engine,
        endpoint: { host: endpoint.host, port: endpoint.port },
        ...(databases.length > 0 ? { databases } : {}),
        credentials: { secretRef: { name: `${name}-credentials` } },
        policy: 'nightly',
        // Columns named email show *** in sandbox queries, table browsing and previews: an example to adapt.
        mask: ['^email$'],
        // The stack's own Postgres runs with wal_level=logical, so masked row previews of its change log work out of
        // the box; a server without it gets a Previews condition naming the setting. MariaDB's previews need no
        // switch (and the schema refuses `logical` for mysql).
        ...(engine === 'postgres' ? { previews: { logical: true } } : {}),
      },
    })),
  ];
}

/** The databases asked for; else the stack's demo database when its server has one; else every database ([]). */
function databasesOf(asked: string[], server: { demoDatabase?: string }): string[] {
  if (asked.length > 0) return asked;
  return server.demoDatabase ? [server.demoDatabase] : [];
}

/** One YAML file, `---` between documents, with a header saying what it is. */
export function quickstartYaml(documents: object[]): string {
  const header = '# Written by `strata quickstart` for the local stack: apply with `strata apply -f <this file>`.\n# It holds the store\'s age identity and local credentials: keep it private.\n';
  return header + documents.map((doc) => YAML.stringify(doc)).join('---\n');
}
