import path from 'node:path';
import { ensureInfra, type Infra } from '@sigil/local-stack';

let infra: Infra | undefined;

/**
 * Provisions Postgres, MySQL (MariaDB), NATS, S3 and the SMTP sink once for the whole run: the ones named in the
 * environment when they answer, otherwise our own. Workers inherit the resulting URLs.
 */
export async function setup(): Promise<void> {
  // TEST_INFRA_DIR lets two runs in one checkout keep separate servers.
  const stateDir = path.resolve(process.env.TEST_INFRA_DIR ?? path.join(import.meta.dirname, '../../.local/test-infra'));
  infra = await ensureInfra({ stateDir, env: process.env, durable: false, log: (line) => console.log(`[infra] ${line}`) });
  process.env.POSTGRES_URL = infra.postgres.adminUrl;
  process.env.MYSQL_URL = infra.mysql.adminUrl;
  process.env.NATS_URL = infra.nats.url;
  process.env.S3_ENDPOINT = infra.s3.endpoint;
  process.env.S3_ACCESS_KEY = infra.s3.accessKey;
  process.env.S3_SECRET_KEY = infra.s3.secretKey;
  process.env.S3_REGION = infra.s3.region;
  process.env.SMTP_URL = `smtp://${infra.smtp.host}:${infra.smtp.port}`;
  process.env.SMTP_INBOX_URL = infra.smtp.inboxUrl;
}

export async function teardown(): Promise<void> {
  await infra?.stop();
}
