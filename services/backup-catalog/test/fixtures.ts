/** Resource documents for tests: a store on the test S3, a policy and targets. */
export interface StackDocsOptions {
  namespace?: string;
  bucket: string;
  recipients: string[];
  catalogRecipients?: string[];
  postgres?: { host: string; port: number; username: string; password?: string };
  mysql?: { host: string; port: number; username: string; password?: string };
  schedule?: string;
  identity?: string;
  limits?: Record<string, unknown>;
  databases?: { postgres?: string[]; mysql?: string[] };
  /** The Postgres target's scope mode (default: physical when its user may replicate). */
  postgresMode?: 'physical' | 'logical';
  /** The policy's change capture. */
  pitr?: { enabled: boolean; partialInterval?: string };
  /** The policy's retention rules. */
  retain?: { newest?: number; daily?: number; weekly?: number; monthly?: number; yearly?: number };
  /** The targets' masked columns and sandbox settings, and the policy's sandbox lifetimes. */
  mask?: string[];
  /** The targets' masked row previews (`enabled`, `rows`, `maxValueLength`; `logical` for postgres). */
  previews?: { enabled?: boolean; rows?: number; maxValueLength?: number; logical?: boolean };
  targetSandbox?: { sizeLimit?: string; postRestoreSQL?: string[] };
  policySandbox?: { defaultTTL?: string; maxTTL?: string };
  /** The policy's verification restores and the targets' SQL checks. */
  verify?: { schedule: string; checks?: string[]; randomPointInTime?: boolean };
  targetChecks?: Array<{ name: string; sql: string; database?: string }>;
}

export function s3Env() {
  return {
    endpoint: process.env.S3_ENDPOINT ?? 'http://127.0.0.1:9000',
    accessKey: process.env.S3_ACCESS_KEY ?? 'S3RVER',
    secretKey: process.env.S3_SECRET_KEY ?? 'S3RVER',
    region: process.env.S3_REGION ?? 'us-east-1',
  };
}

export function stackDocuments(o: StackDocsOptions): string {
  const ns = o.namespace ?? 'default';
  const s3 = s3Env();
  const docs: string[] = [
    `apiVersion: v1
kind: Secret
metadata: { name: store-credentials, namespace: ${ns} }
stringData:
  accessKeyId: ${s3.accessKey}
  secretAccessKey: ${s3.secretKey}`,
    `apiVersion: backups.strata.dev/v1alpha1
kind: BackupStore
metadata: { name: local, namespace: ${ns} }
spec:
  s3:
    endpoint: ${s3.endpoint}
    region: ${s3.region}
    bucket: ${o.bucket}
    pathStyle: true
    disableConditionalPut: true
    credentialsSecret: { name: store-credentials }
  prefix: strata
  encryption:
    ageRecipients: [${o.recipients.join(', ')}]
${o.catalogRecipients?.length ? `    catalogRecipients: [${o.catalogRecipients.join(', ')}]\n` : ''}    identitySecret: { name: store-identity }
    catalogIdentitySecret: { name: store-identity }
  upload: { partSize: 5Mi, concurrency: 2 }`,
    `apiVersion: backups.strata.dev/v1alpha1
kind: BackupPolicy
metadata: { name: nightly, namespace: ${ns} }
spec:
  store: local
  full: { schedule: "${o.schedule ?? '0 3 * * *'}", timeZone: Europe/Paris, startingDeadline: 6h }
  compression: { level: fastest, threads: 1 }
  jobs: { stallTimeout: 60s }
${o.limits ? `  limits: ${JSON.stringify(o.limits)}\n` : ''}${o.retain ? `  retain: ${JSON.stringify(o.retain)}\n` : ''}${o.pitr ? `  pitr: ${JSON.stringify(o.pitr)}\n` : ''}${o.policySandbox ? `  sandbox: ${JSON.stringify(o.policySandbox)}\n` : ''}${o.verify ? `  verify: ${JSON.stringify(o.verify)}\n` : ''}`,
  ];
  if (o.identity) {
    docs.push(`apiVersion: v1
kind: Secret
metadata: { name: store-identity, namespace: ${ns} }
stringData:
  identity: ${JSON.stringify(o.identity)}`);
  }
  for (const [engine, server] of [['postgres', o.postgres], ['mysql', o.mysql]] as const) {
    if (!server) continue;
    const dbs = o.databases?.[engine];
    docs.push(`apiVersion: v1
kind: Secret
metadata: { name: ${engine}-credentials, namespace: ${ns} }
stringData:
  username: ${server.username}
  password: "${server.password ?? ''}"`);
    docs.push(`apiVersion: backups.strata.dev/v1alpha1
kind: BackupTarget
metadata:
  name: ${engine}-main
  namespace: ${ns}
  labels: { backups.strata.dev/env: test, backups.strata.dev/org: acme }
spec:
  engine: ${engine}
  endpoint: { host: ${server.host}, port: ${server.port} }
${dbs ? `  databases: [${dbs.join(', ')}]\n` : ''}  credentials: { secretRef: { name: ${engine}-credentials } }
${engine === 'postgres' && o.postgresMode ? `  scope: { mode: ${o.postgresMode} }\n` : ''}${o.mask ? `  mask: ${JSON.stringify(o.mask)}\n` : ''}${o.previews ? `  previews: ${JSON.stringify(o.previews)}\n` : ''}${o.targetSandbox ? `  sandbox: ${JSON.stringify(o.targetSandbox)}\n` : ''}${o.targetChecks ? `  checks: ${JSON.stringify(o.targetChecks)}\n` : ''}  policy: nightly`);
  }
  return docs.join('\n---\n');
}
