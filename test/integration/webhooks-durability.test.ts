// Nothing lost (issue 12, point 7): the webhooks service killed with SIGKILL in the middle of a burst of 500 events,
// and separately NATS restarted in the middle of one; every event reaches the receiver at least once, and every
// duplicate carries the same webhook-id and the same body. The service runs as its own process (main.ts), NATS is a
// server of this test's own (so it can be restarted), Postgres is the run's.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateInternalKeyPair } from '@sigil/kit/auth';
import { connectBus, type Bus } from '@sigil/kit/bus';
import { parseSecretsKey } from '@sigil/kit/crypto';
import { newId } from '@sigil/kit/ids';
import { freshTestDatabase } from '@sigil/kit/testing';
import { freePort } from '@sigil/local-stack';
import { createEvent, eventSubject, type DomainEvent } from '@sigil/proto/events';
import { createDb, type Db } from '@sigil/webhooks/db';
import { createSecretBox } from '@sigil/webhooks/secrets';

const root = path.resolve(import.meta.dirname, '../..');
const node = process.execPath;
const BURST = 500;

let db: Db;
let databaseUrl: string;
let natsPort: number;
let nats: ChildProcess | undefined;
const natsStore = mkdtempSync(path.join(tmpdir(), 'webhooks-nats-'));
let receiver: Server;
let receiverUrl: string;
const seen = new Map<string, string[]>();
const secretsKey = randomBytes(32).toString('base64');
let publicJwk: string;

async function startNats(): Promise<void> {
  nats = spawn('nats-server', ['-js', '-a', '127.0.0.1', '-p', String(natsPort), '-sd', natsStore], { stdio: 'ignore' });
  for (let i = 0; i < 100; i++) {
    try {
      const bus = await connectBus(`nats://127.0.0.1:${natsPort}`, 'probe');
      await bus.close();
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error('nats-server did not start');
}

async function stopNats(): Promise<void> {
  const child = nats;
  if (!child || child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

/** Starts the service and waits until it listens (its consumers and worker are running by then). */
async function startService(prefix: string): Promise<ChildProcess> {
  const listenFile = path.join(mkdtempSync(path.join(tmpdir(), 'webhooks-listen-')), 'url');
  const child = spawn(node, [path.join(root, 'services/webhooks/src/main.ts')], {
    env: {
      LISTEN_URL_FILE: listenFile,
      PATH: process.env.PATH,
      PORT: '0',
      HOST: '127.0.0.1',
      DATABASE_URL: databaseUrl,
      NATS_URL: `nats://127.0.0.1:${natsPort}`,
      INTERNAL_JWT_PUBLIC_KEY: publicJwk,
      CONSUMER_PREFIX: prefix,
      WEBHOOK_SECRETS_KEY: secretsKey,
      WEBHOOK_ALLOWED_ORIGINS: 'http://127.0.0.1:*',
      // A short attempt timeout makes a short lease: deliveries the killed process held come back in seconds.
      WEBHOOK_TIMEOUT_MS: '2000',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  for (let i = 0; i < 300 && !existsSync(listenFile); i++) await new Promise((r) => setTimeout(r, 50));
  if (!existsSync(listenFile)) throw new Error('the webhooks service did not start');
  return child;
}

async function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

/** Publishes like an outbox relay: each event until the broker acknowledges it (across an outage), de-duplicated by id. */
async function publishAll(bus: Bus, events: DomainEvent[], during: (index: number) => Promise<void>): Promise<void> {
  for (const [index, event] of events.entries()) {
    await during(index);
    for (let tries = 0; ; tries++) {
      try {
        await bus.publish(eventSubject(event.type), event, { msgId: event.id });
        break;
      } catch (error) {
        if (tries > 300) throw error;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  }
}

function burst(organizationId: string): DomainEvent[] {
  return Array.from({ length: BURST }, () => {
    const envelopeId = newId('env');
    return createEvent('envelope.created', organizationId, { envelopeId, templateId: newId('tpl'), testMode: true, envelope: { id: envelopeId, object: 'envelope', status: 'rendering', seal: 'not_started', testMode: true, recipients: [] } } as never);
  });
}

async function endpointFor(organizationId: string): Promise<void> {
  const id = newId('we');
  const box = createSecretBox(parseSecretsKey(secretsKey));
  await db.webhookEndpoint.create({ data: { id, organizationId, testMode: true, url: receiverUrl, events: [], secret: box.seal(id, `whsec_${randomBytes(32).toString('base64')}`), createdAt: new Date(Date.now() - 60_000) } });
}

async function allSeen(events: DomainEvent[], ms = 90_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (events.some((e) => !seen.has(e.id)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
}

beforeAll(async () => {
  databaseUrl = await freshTestDatabase('sigil_webhooks_test_durability', path.join(root, 'prisma/webhooks/migrations'));
  db = createDb(databaseUrl);
  publicJwk = JSON.stringify((await generateInternalKeyPair()).publicJwk);
  natsPort = await freePort();
  await startNats();
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      const id = String(req.headers['webhook-id']);
      seen.set(id, [...(seen.get(id) ?? []), body]);
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
}, 60_000);

afterAll(async () => {
  receiver?.closeAllConnections();
  receiver?.close();
  await stopNats();
  await db?.$disconnect();
});

function expectDelivered(events: DomainEvent[]): void {
  expect(events.filter((e) => !seen.has(e.id)).map((e) => e.id)).toEqual([]);
  for (const e of events) {
    const bodies = seen.get(e.id) as string[];
    // A duplicate is the same delivery again: the same id and the same body.
    expect(new Set(bodies).size).toBe(1);
    expect(JSON.parse(bodies[0] as string)).toMatchObject({ id: e.id, type: 'envelope.created' });
  }
}

/**
 * A burst of 500 events to a fresh endpoint, with `midway` run once half of them are published (`killAndRestart`
 * kills the service with SIGKILL and starts it again); then every event must have arrived.
 */
async function burstSurvives(midway: (killAndRestart: () => Promise<void>) => Promise<void>): Promise<void> {
  const organizationId = newId('org');
  await endpointFor(organizationId);
  const prefix = `dur_${randomBytes(4).toString('hex')}_`;
  let service = await startService(prefix);
  const bus = await connectBus(`nats://127.0.0.1:${natsPort}`, 'test-publisher');
  const events = burst(organizationId);
  try {
    await publishAll(bus, events, async (index) => {
      if (index === BURST / 2) {
        await midway(async () => {
          await kill(service);
          service = await startService(prefix);
        });
      }
    });
    await allSeen(events);
    expectDelivered(events);
  } finally {
    await bus.close();
    await kill(service);
  }
}

describe('webhook deliveries survive crashes', () => {
  it('kill -9 of the service in the middle of a burst of 500 events loses none', async () => {
    await burstSurvives(async (killAndRestart) => {
      // Let it get properly into the burst first: some delivered, some queued, some in flight.
      for (let i = 0; i < 100 && seen.size < 50; i++) await new Promise((r) => setTimeout(r, 50));
      await killAndRestart();
    });
  }, 150_000);

  it('a NATS restart in the middle of a burst loses none', async () => {
    await burstSurvives(async () => {
      await stopNats();
      await new Promise((r) => setTimeout(r, 500));
      await startNats();
    });
  }, 150_000);
});
