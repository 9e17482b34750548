import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Express } from 'express';
import { createTestAuth, freshTestDatabase, silentLogger, type TestAuth } from '@sigil/kit/testing';
import { createApp } from '../src/app.ts';
import { createDb, type Db } from '../src/db.ts';
import { startDeliveryWorker, type DeliveryWorker } from '../src/worker.ts';
import { createSecretBox } from '../src/secrets.ts';
import { createSender, type Sender } from '../src/sender.ts';
import type { Resolver, UrlPolicy } from '@sigil/kit/http';

export const migrationsDir = path.resolve(import.meta.dirname, '../../../prisma/webhooks/migrations');

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/** A local webhook receiver: records every request; `respond` decides the answer (status, delay, redirect). */
export async function startReceiver(respond: (count: number) => { status?: number; delayMs?: number; location?: string } = () => ({})) {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
      const answer = respond(received.length);
      const send = () => {
        if (res.destroyed) return;
        res.writeHead(answer.status ?? 200, answer.location ? { location: answer.location } : {}).end('ok');
      };
      if (answer.delayMs) setTimeout(send, answer.delayMs);
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return {
    url,
    received,
    /** Waits until `count` requests arrived (bounded). */
    async until(count: number, ms = 10_000): Promise<Received[]> {
      const deadline = Date.now() + ms;
      while (received.length < count && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      return received;
    },
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export interface WebhooksHarness {
  db: Db;
  app: Express;
  auth: TestAuth;
  worker: DeliveryWorker;
  sender: Sender;
  dns: Record<string, string[]>;
  close(): Promise<void>;
}

/** Scaled retry schedule for tests: the same shape as the spec's, in tens of milliseconds. */
export const TEST_RETRY_DELAYS_MS = [100, 200, 300] as const;

export async function startWebhooksHarness(name: string, options: { timeoutMs?: number } = {}): Promise<WebhooksHarness> {
  const db = createDb(await freshTestDatabase(`sigil_webhooks_test_${name}`, migrationsDir));
  const auth = await createTestAuth();
  // No DNS leaves the machine: names resolve from this table, which a test may change between checks.
  const dns: Record<string, string[]> = {};
  const resolve: Resolver = async (host) => {
    const addresses = dns[host];
    if (!addresses) throw new Error('ENOTFOUND');
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  const policy: UrlPolicy = { allowedOrigins: ['http://127.0.0.1:*'], resolve };
  const secrets = createSecretBox(randomBytes(32));
  const sender = createSender();
  const clock = () => new Date();
  const worker = startDeliveryWorker(
    { db, sender, policy, secrets, clock, log: silentLogger(), retryDelaysMs: TEST_RETRY_DELAYS_MS, maxAgeMs: 60_000, timeoutMs: options.timeoutMs ?? 2_000 },
    { pollMs: 50, perEndpoint: 2, concurrency: 16 },
  );
  const { app } = await createApp({ db, log: silentLogger(), verifyPrincipal: auth.verify, secrets, policy, clock, wake: () => void worker.wake() });
  return {
    db,
    app,
    auth,
    worker,
    sender,
    dns,
    async close() {
      await worker.stop();
      await sender.close();
      await db.$disconnect();
    },
  };
}
