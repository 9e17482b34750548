// The services of issue 29's benchmarks (test/bench/links.ts, test/bench/viewers.ts), in this process: the real
// envelopes app and the real signing app, each on its own fresh database on the machine's Postgres (POSTGRES_URL), each
// served on 127.0.0.1; signing reaches envelopes over HTTP through its real clients (envelopes, links, viewers) with
// principals signed by a test key pair; the templates service answered in memory (as the service tests do); S3 from
// S3_ENDPOINT or an embedded s3rver; mail through the real mailer (nodemailer) to SMTP_URL or an SMTP sink in a child process (links-smtp.ts);
// the domain events on the machine's NATS (NATS_URL). With `events`, envelopes' outbox relay runs as its main.ts runs it,
// and every message it publishes is recorded, to be deleted from its stream at `close` (the streams are shared).
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { createApp as createEnvelopesApp } from '@sigil/envelopes';
import { createDb as createEnvelopesDb } from '@sigil/envelopes/db';
import { createApp as createSigningApp } from '@sigil/signing';
import { createDb as createSigningDb } from '@sigil/signing/db';
import { createEnvelopesClient } from '@sigil/signing/envelopes-client';
import { createLinksClient } from '@sigil/signing/links-client';
import { createViewersClient } from '@sigil/signing/viewers-client';
import { PRINCIPAL_HEADER } from '@sigil/kit/auth';
import { connectBus, startOutboxRelay, type NatsBus, type OutboxRelay } from '@sigil/kit/bus';
import { newId } from '@sigil/kit/ids';
import { apiKeyPrincipal, createTestAuth, freshTestDatabase, silentLogger, testNatsUrl, testPostgresAdminUrl } from '@sigil/kit/testing';
import { createInboxSmsProvider, createMailer, type Mailer } from '@sigil/mail';
import type { TemplateVersionSnapshot } from '@sigil/proto/internal-templates';
import { startS3, type S3Handle } from '@sigil/local-stack';
import { createS3FileStore } from '@strata/stream/file-store';
import { testFileStoreOptions } from '@strata/stream/testing';

type TemplatesClient = Parameters<typeof createEnvelopesApp>[0]['templates'];

const root = path.resolve(import.meta.dirname, '../..');

export interface BenchServices {
  envelopesUrl: string;
  signingUrl: string;
  /** Another signing app on the same database and clients, with another mailer; its URL. */
  startSigning(mailer: Mailer): Promise<string>;
  envelopesDb: ReturnType<typeof createEnvelopesDb>;
  signingDb: ReturnType<typeof createSigningDb>;
  organizationId: string;
  templateId: string;
  /** The bus signing's viewer streams listen on (plain NATS), and the outbox relay publishes with. */
  bus: NatsBus;
  relay: OutboxRelay | undefined;
  /** Where mail goes: `SMTP_URL`, or the in-process sink's. */
  smtp: string;
  /** Envelopes' public API as the gateway calls it, with a principal of the organization (live mode) signed per call. */
  api(method: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }>;
  /** Messages the relay published, by stream. */
  published(): number;
  close(): Promise<void>;
}

/** The bench's template: two roles (client, counsel), a variable, a signature each. */
function template(templateId: string): TemplateVersionSnapshot {
  return {
    templateId,
    templateName: 'Services agreement',
    version: 1,
    roles: [{ name: 'client', order: 1 }, { name: 'counsel', order: 2 }],
    fields: [
      { id: 'company', role: 'client', type: 'text', required: true, page: 1, x: 72, y: 100, width: 300, height: 24, variable: 'company' },
      { id: 'client_signature', role: 'client', type: 'signature', required: true, page: 2, x: 72, y: 600, width: 200, height: 40 },
      { id: 'counsel_signature', role: 'counsel', type: 'signature', required: true, page: 2, x: 320, y: 600, width: 200, height: 40 },
    ],
    variables: [{ name: 'company', required: true }],
    pageCount: 2,
    pages: [{ width: 612, height: 792 }, { width: 612, height: 792 }],
    sha256: '0'.repeat(64),
    publishedAt: new Date().toISOString(),
  };
}

async function listen(app: Parameters<typeof createServer>[1]): Promise<{ server: Server; url: string }> {
  const server = createServer(app);
  server.keepAliveTimeout = 65_000; // as runServer sets it
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

export interface BenchServicesOptions {
  /** Run envelopes' outbox relay (its domain events reach NATS). */
  events: boolean;
  /** Called as the relay's publish of each event is acknowledged by JetStream. */
  onPublish?: (payload: unknown) => void;
}

export async function startBenchServices(name: string, options: BenchServicesOptions): Promise<BenchServices> {
  const tag = randomBytes(4).toString('hex');
  const databases: string[] = [];
  const servers: Server[] = [];
  const cleanups: Array<() => Promise<unknown> | unknown> = [];
  const published: Array<{ stream: string; seq: number }> = [];
  let bus: NatsBus | undefined;

  async function close(): Promise<void> {
    for (const cleanup of cleanups.reverse()) await Promise.resolve(cleanup()).catch((error: unknown) => console.error('cleanup:', error));
    for (const server of servers) {
      server.closeAllConnections();
      server.close();
    }
    if (bus) {
      // The streams are shared: a consumer created later from a stream's start would see these messages.
      const owned = bus;
      let next = 0;
      let failed = 0;
      await Promise.all(Array.from({ length: 32 }, async () => {
        while (next < published.length) {
          const { stream, seq } = published[next++] as { stream: string; seq: number };
          await owned.jsm.streams.deleteMessage(stream, seq, false).catch(() => void failed++);
        }
      }));
      if (failed > 0) console.error(`cleanup: ${failed} of ${published.length} published messages could not be deleted`);
      await owned.close();
    }
    const admin = new pg.Client({ connectionString: testPostgresAdminUrl() });
    await admin.connect();
    for (const database of databases) await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch((error: unknown) => console.error(`dropping ${database}:`, error));
    await admin.end();
  }

  try {
    const database = async (service: string) => {
      const db = `sigil_bench_${name}_${service}_${tag}`;
      databases.push(db);
      return freshTestDatabase(db, path.join(root, `prisma/${service}/migrations`));
    };
    const auth = await createTestAuth();
    const log = silentLogger();
    bus = await connectBus(testNatsUrl(), `bench-${name}`);

    let s3: S3Handle | undefined;
    let storeOptions = testFileStoreOptions(`sigil-bench-${name}`);
    if (!process.env.S3_ENDPOINT) {
      const stateDir = await mkdtemp(path.join(tmpdir(), `sigil-bench-${name}-`));
      s3 = await startS3({ stateDir, log: () => undefined });
      cleanups.push(async () => {
        await s3?.stop();
        await rm(stateDir, { recursive: true, force: true });
      });
      storeOptions = { ...storeOptions, endpoint: s3.endpoint, region: s3.region, accessKeyId: s3.accessKey, secretAccessKey: s3.secretKey };
    }
    const store = await createS3FileStore(storeOptions);

    const smtp = process.env.SMTP_URL ?? (await startSmtpSink(cleanups));
    const mailer = createMailer({ url: smtp, from: 'Sigil <no-reply@sigil.test>' });
    cleanups.push(() => mailer.close());

    // Envelopes: its real app; its outbox relay (main.ts's) when the bench needs its events.
    const envelopesDatabase = await database('envelopes');
    const envelopesDb = createEnvelopesDb(envelopesDatabase);
    cleanups.push(() => envelopesDb.$disconnect());
    const templateId = newId('tpl');
    const snapshot = template(templateId);
    const templates: TemplatesClient = {
      version: async (_caller, id) => (id === templateId ? snapshot : undefined),
      use: async (_caller, id) => (id === templateId ? snapshot : undefined),
      document: async () => Buffer.alloc(0),
    };
    const envelopes = await listen((await createEnvelopesApp({ db: envelopesDb, log, verifyPrincipal: auth.verify, templates, store, mail: { mailer, publicUrl: 'https://sign.example.test' } })).app);
    servers.push(envelopes.server);
    let relay: OutboxRelay | undefined;
    if (options.events) {
      const natsBus = bus;
      // The same publish as the bus's (JetStream, the event id as Nats-Msg-Id), keeping where each message landed.
      const recording = {
        async publish(subject: string, payload: unknown, publishOptions: { msgId?: string } = {}) {
          const ack = await natsBus.js.publish(subject, JSON.stringify(payload), publishOptions.msgId ? { msgID: publishOptions.msgId } : undefined);
          if (!ack.duplicate) published.push({ stream: ack.stream, seq: ack.seq });
          options.onPublish?.(payload);
        },
      };
      relay = await startOutboxRelay({ databaseUrl: envelopesDatabase, bus: recording, log });
      const started = relay;
      cleanups.push(() => started.stop());
    }

    // Signing: its real app, with its real clients of envelopes, as main.ts builds it; behind one trusted proxy (the
    // gateway), whose X-Forwarded-For the bench sends.
    const signingDatabase = await database('signing');
    const signingDb = createSigningDb(signingDatabase);
    cleanups.push(() => signingDb.$disconnect());
    // The caps' and exchanges' counts (`rate_limits`), as main.ts pools them.
    const pool = new pg.Pool({ connectionString: signingDatabase, max: 4 });
    cleanups.push(() => pool.end());
    const clientOptions = { baseUrl: envelopes.url, signPrincipal: auth.sign };
    const feed = bus;
    const startSigning = async (appMailer: Mailer) => {
      const signing = await listen((await createSigningApp({
        db: signingDb,
        log,
        verifyPrincipal: auth.verify,
        envelopes: createEnvelopesClient(clientOptions),
        store,
        mailer: appMailer,
        sms: createInboxSmsProvider(appMailer),
        links: { client: createLinksClient(clientOptions), pool },
        viewers: { client: createViewersClient(clientOptions), feed, pool },
        trustedProxies: 1,
      })).app);
      servers.push(signing.server);
      return signing.url;
    };
    const signingUrl = await startSigning(mailer);

    const organizationId = newId('org');
    const principal = apiKeyPrincipal({ organizationId, mode: 'live' });
    return {
      envelopesUrl: envelopes.url,
      signingUrl,
      startSigning,
      envelopesDb,
      signingDb,
      organizationId,
      templateId,
      bus,
      relay,
      smtp,
      async api(method, apiPath, body) {
        const res = await fetch(`${envelopes.url}${apiPath}`, {
          method,
          headers: { [PRINCIPAL_HEADER]: await auth.sign(principal), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        const text = await res.text();
        return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
      },
      published: () => published.length,
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}


/** The SMTP sink in a child process (links-smtp.ts); its URL. */
async function startSmtpSink(cleanups: Array<() => Promise<unknown> | unknown>): Promise<string> {
  const child = spawn(process.execPath, [path.join(import.meta.dirname, 'links-smtp.ts')], { stdio: ['pipe', 'pipe', 'inherit'] });
  cleanups.push(async () => {
    child.stdin.end();
    if (child.exitCode === null) await once(child, 'exit');
  });
  let out = '';
  for await (const chunk of child.stdout) {
    out += String(chunk);
    const url = /smtp:\/\/\S+/.exec(out)?.[0];
    if (url) return url;
  }
  throw new Error(`the SMTP sink did not start: ${out}`);
}
