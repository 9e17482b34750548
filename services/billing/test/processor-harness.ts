/**
 * What the processor adapter's tests stand on: a local processor on a free port, the adapter pointed at it by host and
 * port, the raw SDK for looking at the processor's side, and a small receiver that stands for Sigil (webhooks in,
 * the pages checkout and the portal send people back to).
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startLocalProcessor, type LocalProcessor } from '@sigil/local-processor';
import Stripe from 'stripe';
import { createStripeProcessor } from '../src/processor/stripe-processor.ts';
import type { Processor } from '../src/processor/processor.ts';

export const SECRET_KEY = 'sk_test_local_processor_harness';
export const WEBHOOK_SECRET = 'whsec_local_processor_harness';

export interface ReceivedWebhook {
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export interface Receiver {
  url: string;
  webhooks: ReceivedWebhook[];
  /** Paths of the pages people were sent back to (success, cancel, return). */
  visits: string[];
  stop(): Promise<void>;
}

/** Sigil's side: `POST /webhooks` is recorded and answered 200; any `GET` is a small page that says where it is. */
export async function startReceiver(): Promise<Receiver> {
  const webhooks: ReceivedWebhook[] = [];
  const visits: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/webhooks') {
        webhooks.push({ headers: req.headers, body: Buffer.concat(chunks) });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"received":true}');
        return;
      }
      visits.push(req.url ?? '/');
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(`<!doctype html><html lang="en"><title>Sigil</title><h1>Back in Sigil</h1><p id="where">${(req.url ?? '/').replace(/[<&>"]/g, '')}</p></html>`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, webhooks, visits, stop: () => close(server) };
}

export interface Harness {
  processor: LocalProcessor;
  adapter: Processor;
  /** The SDK on the same processor, to look at what the adapter did. */
  stripe: Stripe;
  receiver: Receiver;
  log: string[];
  stop(): Promise<void>;
}

export async function startHarness(): Promise<Harness> {
  const receiver = await startReceiver();
  const log: string[] = [];
  const processor = await startLocalProcessor({ host: '127.0.0.1', port: 0, secretKey: SECRET_KEY, webhookSecret: WEBHOOK_SECRET, webhookUrl: `${receiver.url}/webhooks`, log: (line) => log.push(line) });
  const address = { host: '127.0.0.1', port: processor.port, protocol: 'http' as const };
  return {
    processor,
    adapter: createStripeProcessor({ secretKey: SECRET_KEY, webhookSecret: WEBHOOK_SECRET, ...address }),
    stripe: new Stripe(SECRET_KEY, { ...address, maxNetworkRetries: 0 }),
    receiver,
    log,
    async stop() {
      await processor.stop();
      await receiver.stop();
    },
  };
}

/** Posts the checkout page's form as a browser would, without following the redirect. */
export async function payCheckout(url: string, card: string, overrides: Record<string, string> = {}): Promise<{ status: number; location: string | null; html: string }> {
  const form = new URLSearchParams({ card, expiry: '12 / 34', cvc: '123', name: 'Ada Lovelace', ...overrides });
  const response = await fetch(url, { method: 'POST', body: form, redirect: 'manual' });
  return { status: response.status, location: response.headers.get('location'), html: await response.text() };
}

function close(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
