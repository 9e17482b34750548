import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { canConnect, errorMessage, isPortFree, redactUrl } from './net.ts';
import { probeNats, startNats } from './nats.ts';
import { ensureDatabase } from '@sigil/kit/db';
import { probeMysql, startMariadb } from './mariadb.ts';
import { probePostgres, startPostgres } from './postgres.ts';
import { probeS3, startS3 } from './s3.ts';
import { createSmtpSink } from './smtp-sink.ts';

export { ensureDatabase };

export interface InfraOptions {
  /** Where our own servers keep their state (data, ports, logs, mail); `.local/` at the repo root by convention. */
  stateDir: string;
  /** Where to look for POSTGRES_URL, MYSQL_URL, NATS_URL, S3_*, SMTP_*; default process.env. */
  env?: NodeJS.ProcessEnv;
  log?: (line: string) => void;
  /** false: the Postgres we start is a throwaway one (tests), run without fsync. Default true. */
  durable?: boolean;
}

export type Source = 'env' | 'started';

export interface Infra {
  /** adminUrl connects to database "postgres" as a superuser. */
  postgres: { adminUrl: string; source: Source };
  /** adminUrl (`mysql://root@127.0.0.1:PORT/`) connects as a user able to create databases; ours is MariaDB with binlog on. */
  mysql: { adminUrl: string; source: Source };
  /** JetStream enabled. */
  nats: { url: string; source: Source };
  /** endpoint like http://127.0.0.1:PORT */
  s3: { endpoint: string; region: string; accessKey: string; secretKey: string; source: Source };
  /** inboxUrl is '' when SMTP_URL names a server without SMTP_INBOX_URL. */
  smtp: { host: string; port: number; inboxUrl: string; source: Source };
  stateDir: string;
  /** Stops only what ensureInfra started; env-provided services are never touched. Idempotent. */
  stop(): Promise<void>;
}

/** `<repo root>/.local`, the state directory `npm start` uses. */
export const DEFAULT_STATE_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../.local');

const PROBE_TIMEOUT_MS = 2000;

interface Part<T> {
  value: T;
  stop: () => Promise<void>;
}

const nothingToStop = async (): Promise<void> => {};

function named(env: NodeJS.ProcessEnv, key: string): string | undefined {
  const value = env[key]?.trim();
  return value ? value : undefined;
}

async function postgresPart(env: NodeJS.ProcessEnv, stateDir: string, log: (l: string) => void, durable: boolean): Promise<Part<Infra['postgres']>> {
  const url = named(env, 'POSTGRES_URL');
  if (url) {
    const problem = await probePostgres(url, PROBE_TIMEOUT_MS);
    if (problem === undefined) {
      log(`postgres: using POSTGRES_URL ${redactUrl(url)}`);
      return { value: { adminUrl: url, source: 'env' }, stop: nothingToStop };
    }
    log(`postgres: POSTGRES_URL ${redactUrl(url)} does not answer (${problem}); starting our own`);
  }
  const handle = await startPostgres({ stateDir, env, log, durable });
  return { value: { adminUrl: handle.adminUrl, source: 'started' }, stop: handle.stop };
}

async function mysqlPart(env: NodeJS.ProcessEnv, stateDir: string, log: (l: string) => void): Promise<Part<Infra['mysql']>> {
  const url = named(env, 'MYSQL_URL');
  if (url) {
    const problem = await probeMysql(url, PROBE_TIMEOUT_MS);
    if (problem === undefined) {
      log(`mysql: using MYSQL_URL ${redactUrl(url)}`);
      return { value: { adminUrl: url, source: 'env' }, stop: nothingToStop };
    }
    log(`mysql: MYSQL_URL ${redactUrl(url)} does not answer (${problem}); starting our own MariaDB`);
  }
  const handle = await startMariadb({ stateDir, env, log });
  return { value: { adminUrl: handle.adminUrl, source: 'started' }, stop: handle.stop };
}

async function natsPart(env: NodeJS.ProcessEnv, stateDir: string, log: (l: string) => void): Promise<Part<Infra['nats']>> {
  const url = named(env, 'NATS_URL');
  if (url) {
    const problem = await probeNats(url, PROBE_TIMEOUT_MS);
    if (problem === undefined) {
      log(`nats: using NATS_URL ${redactUrl(url)}`);
      return { value: { url, source: 'env' }, stop: nothingToStop };
    }
    log(`nats: NATS_URL ${redactUrl(url)} does not answer with JetStream (${problem}); starting our own`);
  }
  const handle = await startNats({ stateDir, env, log });
  return { value: { url: handle.url, source: 'started' }, stop: handle.stop };
}

async function s3Part(env: NodeJS.ProcessEnv, stateDir: string, log: (l: string) => void): Promise<Part<Infra['s3']>> {
  const endpoint = named(env, 'S3_ENDPOINT');
  if (endpoint) {
    const accessKey = named(env, 'S3_ACCESS_KEY');
    const secretKey = named(env, 'S3_SECRET_KEY');
    if (!accessKey || !secretKey) {
      log(`s3: S3_ENDPOINT is set but S3_ACCESS_KEY/S3_SECRET_KEY are not; starting our own`);
    } else {
      const problem = await probeS3(endpoint, PROBE_TIMEOUT_MS);
      if (problem === undefined) {
        log(`s3: using S3_ENDPOINT ${redactUrl(endpoint)}`);
        const region = named(env, 'S3_REGION') ?? 'us-east-1';
        return { value: { endpoint, region, accessKey, secretKey, source: 'env' }, stop: nothingToStop };
      }
      log(`s3: S3_ENDPOINT ${redactUrl(endpoint)} does not answer (${problem}); starting our own`);
    }
  }
  const handle = await startS3({ stateDir, log });
  const { endpoint: ep, region, accessKey, secretKey } = handle;
  return { value: { endpoint: ep, region, accessKey, secretKey, source: 'started' }, stop: handle.stop };
}

function parseSmtpUrl(url: string): { host: string; port: number } | undefined {
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== 'smtp:' && parsed.protocol !== 'smtps:') return undefined;
    const port = parsed.port ? Number(parsed.port) : parsed.protocol === 'smtps:' ? 465 : 25;
    const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
    return host ? { host, port } : undefined;
  } catch {
    return undefined;
  }
}

async function smtpPart(env: NodeJS.ProcessEnv, stateDir: string, log: (l: string) => void): Promise<Part<Infra['smtp']>> {
  const url = named(env, 'SMTP_URL');
  if (url) {
    const target = parseSmtpUrl(url);
    if (!target) {
      log(`smtp: SMTP_URL ${redactUrl(url)} is not an smtp:// URL; starting our own sink`);
    } else if (await canConnect(target.host, target.port, PROBE_TIMEOUT_MS)) {
      const inboxUrl = named(env, 'SMTP_INBOX_URL') ?? '';
      log(`smtp: using SMTP_URL ${redactUrl(url)}${inboxUrl ? ` (inbox ${inboxUrl})` : ' (no SMTP_INBOX_URL: no inbox to read)'}`);
      return { value: { ...target, inboxUrl: inboxUrl.replace(/\/+$/, ''), source: 'env' }, stop: nothingToStop };
    } else {
      log(`smtp: SMTP_URL ${redactUrl(url)} does not accept connections; starting our own sink`);
    }
  }
  // Keep the same ports across runs when they are still free, so URLs stay stable.
  const portsFile = path.join(stateDir, 'smtp.port');
  const [smtpPort, inboxPort] = readPorts(portsFile);
  const sink = await createSmtpSink({
    dir: path.join(stateDir, 'mail'),
    log,
    port: smtpPort !== undefined && (await isPortFree(smtpPort)) ? smtpPort : 0,
    inboxPort: inboxPort !== undefined && (await isPortFree(inboxPort)) ? inboxPort : 0,
  }).catch(() => createSmtpSink({ dir: path.join(stateDir, 'mail'), log })); // lost a port race: any ports
  fs.writeFileSync(portsFile, `${sink.port} ${new URL(sink.inboxUrl).port}\n`);
  log(`smtp: sink on smtp://${sink.host}:${sink.port}, inbox ${sink.inboxUrl}/messages`);
  return { value: { host: sink.host, port: sink.port, inboxUrl: sink.inboxUrl, source: 'started' }, stop: sink.stop };
}

function readPorts(file: string): Array<number | undefined> {
  try {
    return fs
      .readFileSync(file, 'utf8')
      .trim()
      .split(/\s+/)
      .map((p) => (Number.isInteger(Number(p)) && Number(p) > 0 ? Number(p) : undefined));
  } catch {
    return [];
  }
}

/**
 * Use the Postgres, MySQL, NATS, S3 and SMTP named in the environment when they answer,
 * otherwise start our own on free loopback ports, with state under stateDir.
 */
export async function ensureInfra(options: InfraOptions): Promise<Infra> {
  const env = options.env ?? process.env;
  const log = options.log ?? (() => {});
  const stateDir = path.resolve(options.stateDir);
  fs.mkdirSync(stateDir, { recursive: true });

  const settled = await Promise.allSettled([
    postgresPart(env, stateDir, log, options.durable ?? true),
    natsPart(env, stateDir, log),
    mysqlPart(env, stateDir, log),
    s3Part(env, stateDir, log),
    smtpPart(env, stateDir, log),
  ]);
  const stops: Array<() => Promise<void>> = [];
  const failures: unknown[] = [];
  for (const result of settled) {
    if (result.status === 'fulfilled') stops.push(result.value.stop);
    else failures.push(result.reason);
  }
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= Promise.allSettled(stops.map((s) => s())).then((results) => {
      for (const r of results) if (r.status === 'rejected') log(`stop: ${errorMessage(r.reason)}`);
    });
    return stopping;
  };
  if (failures.length > 0) {
    await stop();
    if (failures.length === 1) throw failures[0];
    throw new AggregateError(failures, `local infrastructure failed to start: ${failures.map(errorMessage).join(' | ')}`);
  }
  const [pg, nats, my, s3, smtp] = settled as [
    PromiseFulfilledResult<Part<Infra['postgres']>>,
    PromiseFulfilledResult<Part<Infra['nats']>>,
    PromiseFulfilledResult<Part<Infra['mysql']>>,
    PromiseFulfilledResult<Part<Infra['s3']>>,
    PromiseFulfilledResult<Part<Infra['smtp']>>,
  ];
  return {
    postgres: pg.value.value,
    mysql: my.value.value,
    nats: nats.value.value,
    s3: s3.value.value,
    smtp: smtp.value.value,
    stateDir,
    stop,
  };
}
