import path from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import * as Minio from 'minio';
import nodemailer from 'nodemailer';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { ensureDatabase, ensureInfra } from '../src/index.ts';
import type { Infra, SinkMessage } from '../src/index.ts';
import { canConnect } from '../src/net.ts';
import { alive, processTree, readPid, removeDir, tempStateDir } from './helpers.ts';

async function query<T extends pg.QueryResultRow>(url: string, sql: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql)).rows;
  } finally {
    await client.end();
  }
}

async function readStream(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

describe('ensureInfra with an empty environment', () => {
  const stateDir = tempStateDir();
  const started: Infra[] = [];
  afterAll(async () => {
    await Promise.all(started.map((i) => i.stop()));
    removeDir(stateDir);
  });

  it('starts its own Postgres, NATS, S3 and SMTP, and stop() leaves nothing running', { timeout: 60_000 }, async () => {
    const lines: string[] = [];
    const infra = await ensureInfra({ stateDir, env: {}, log: (l) => lines.push(l) });
    started.push(infra);
    expect(infra.postgres.source).toBe('started');
    expect(infra.nats.source).toBe('started');
    expect(infra.s3.source).toBe('started');
    expect(infra.smtp.source).toBe('started');
    expect(infra.postgres.adminUrl).toMatch(/^postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres$/);
    expect(infra.postgres.adminUrl).not.toContain(':5432/');
    expect(infra.nats.url).toMatch(/^nats:\/\/127\.0\.0\.1:\d+$/);
    expect(infra.nats.url).not.toContain(':4222');

    // Postgres: a query works, as a superuser.
    const rows = await query<{ one: number; su: boolean }>(
      infra.postgres.adminUrl,
      "SELECT 1 AS one, current_setting('is_superuser') = 'on' AS su",
    );
    expect(rows).toEqual([{ one: 1, su: true }]);

    // ensureDatabase: idempotent and safe when callers race.
    const urls = await Promise.all(Array.from({ length: 6 }, () => ensureDatabase(infra.postgres.adminUrl, 'sigil-accounts')));
    expect(new Set(urls).size).toBe(1);
    expect(urls[0]).toBe(infra.postgres.adminUrl.replace(/\/postgres$/, '/sigil-accounts'));
    expect(await query(urls[0] as string, 'SELECT current_database() AS db')).toEqual([{ db: 'sigil-accounts' }]);
    expect(await ensureDatabase(infra.postgres.adminUrl, 'sigil-accounts')).toBe(urls[0]);

    // NATS: JetStream answers.
    const nc = await connect({ servers: infra.nats.url, timeout: 2000 });
    try {
      const jsm = await jetstreamManager(nc);
      await jsm.streams.add({ name: 'TEST', subjects: ['test.>'] });
      const js = jsm.jetstream();
      const ack = await js.publish('test.hello', 'hi');
      expect(ack.stream).toBe('TEST');
      expect((await jsm.streams.info('TEST')).state.messages).toBe(1);
    } finally {
      await nc.close();
    }

    // S3: create a bucket, put and get an object with the minio client.
    const endpoint = new URL(infra.s3.endpoint);
    const s3 = new Minio.Client({
      endPoint: endpoint.hostname,
      port: Number(endpoint.port),
      useSSL: false,
      accessKey: infra.s3.accessKey,
      secretKey: infra.s3.secretKey,
      region: infra.s3.region,
      pathStyle: true,
    });
    await s3.makeBucket('documents', infra.s3.region);
    await s3.putObject('documents', 'hello/world.txt', Buffer.from('hello s3'), undefined, { 'Content-Type': 'text/plain' });
    expect(await readStream(await s3.getObject('documents', 'hello/world.txt'))).toBe('hello s3');

    // SMTP: a mail sent with nodemailer shows up in the inbox API.
    const transport = nodemailer.createTransport({ host: infra.smtp.host, port: infra.smtp.port, secure: false, ignoreTLS: true });
    await transport.sendMail({ from: 'no-reply@sigil.test', to: 'owner@example.com', subject: 'Welcome', text: 'Your key is ready.' });
    transport.close();
    const inbox = (await (await fetch(`${infra.smtp.inboxUrl}/messages`)).json()) as SinkMessage[];
    expect(inbox).toHaveLength(1);
    expect(inbox[0]).toMatchObject({ subject: 'Welcome', to: ['owner@example.com'] });
    expect(inbox[0]?.text.trim()).toBe('Your key is ready.');

    // A second ensureInfra pointed at these reports them as env-provided, and its stop() leaves them alone.
    const viaEnv = await ensureInfra({
      stateDir: path.join(stateDir, 'second'),
      env: {
        POSTGRES_URL: infra.postgres.adminUrl,
        NATS_URL: infra.nats.url,
        S3_ENDPOINT: infra.s3.endpoint,
        S3_ACCESS_KEY: infra.s3.accessKey,
        S3_SECRET_KEY: infra.s3.secretKey,
        S3_REGION: infra.s3.region,
        SMTP_URL: `smtp://${infra.smtp.host}:${infra.smtp.port}`,
        SMTP_INBOX_URL: infra.smtp.inboxUrl,
      },
    });
    expect(viaEnv.postgres).toEqual({ adminUrl: infra.postgres.adminUrl, source: 'env' });
    expect(viaEnv.nats).toEqual({ url: infra.nats.url, source: 'env' });
    expect(viaEnv.s3).toEqual({ ...infra.s3, source: 'env' });
    expect(viaEnv.smtp).toEqual({ ...infra.smtp, source: 'env' });
    await viaEnv.stop();
    expect(await query(infra.postgres.adminUrl, 'SELECT 1 AS one')).toEqual([{ one: 1 }]);

    // stop(): every process we started (and their children) is gone, every port closed.
    const postmaster = readPid(path.join(stateDir, 'postgres', 'postmaster.pid'));
    const natsServer = readPid(path.join(stateDir, 'nats.pid'));
    const pids = processTree([postmaster, natsServer]);
    expect(pids.length).toBeGreaterThan(2); // postgres has background workers
    const ports = [
      Number(new URL(infra.postgres.adminUrl).port),
      Number(new URL(infra.nats.url).port),
      Number(endpoint.port),
      infra.smtp.port,
      Number(new URL(infra.smtp.inboxUrl).port),
    ];
    await infra.stop();
    expect(pids.filter(alive)).toEqual([]);
    for (const port of ports) expect(await canConnect('127.0.0.1', port, 500)).toBe(false);
    expect(lines.some((l) => l.startsWith('postgres: initdb'))).toBe(true);
  });

  it('reuses its data and ports on the next run', { timeout: 60_000 }, async () => {
    const lines: string[] = [];
    const first = started[0] as Infra;
    const infra = await ensureInfra({ stateDir, env: {}, log: (l) => lines.push(l) });
    started.push(infra);
    expect(lines.some((l) => l.startsWith('postgres: initdb'))).toBe(false);
    expect(infra.postgres.adminUrl).toBe(first.postgres.adminUrl);
    expect(infra.nats.url).toBe(first.nats.url);
    expect(infra.s3.endpoint).toBe(first.s3.endpoint);
    const dbs = await query<{ datname: string }>(infra.postgres.adminUrl, "SELECT datname FROM pg_database WHERE datname = 'sigil-accounts'");
    expect(dbs).toHaveLength(1);
    const nc = await connect({ servers: infra.nats.url, timeout: 2000 });
    try {
      expect((await (await jetstreamManager(nc)).streams.info('TEST')).state.messages).toBe(1);
    } finally {
      await nc.close();
    }
    await infra.stop();
    await infra.stop(); // idempotent
  });
});
