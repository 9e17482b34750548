import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** What the receiver kept of one event (by its webhook-id). */
export interface ReceivedEvent {
  type: string;
  envelopeId: string | undefined;
  /** Deliveries answered 2xx; a retry of an event already answered 2xx counts here too. */
  accepted: number;
  /** Deliveries refused on purpose (500). */
  refused: number;
}

/**
 * A webhook receiver on loopback that fails on purpose: the first delivery of about one event in `failOneIn` is
 * answered 500 (chosen by a hash of its webhook-id, so a redelivery of it succeeds). It verifies each signature
 * with the standardwebhooks library and deduplicates by webhook-id, as the platform tells receivers to.
 */
export class FlakyReceiver {
  readonly events = new Map<string, ReceivedEvent>();
  /** Requests whose signature did not verify (never expected). */
  readonly unverified: string[] = [];
  private server: Server | undefined;
  /** One per endpoint (each organization's endpoint has its own secret). */
  private readonly verifiers: Webhook[] = [];
  private readonly failOneIn: number;

  constructor(failOneIn = 4) {
    this.failOneIn = failOneIn;
  }

  /** The endpoint's URL, once started. */
  url = '';

  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      req.on('end', () => res.writeHead(this.receive(req.headers as Record<string, string>, body)).end());
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks`;
    return this.url;
  }

  /** An endpoint's signing secret, known once the endpoint is registered. */
  useSecret(secret: string): void {
    this.verifiers.push(new Webhook(secret));
  }

  get refusedOnPurpose(): number {
    return [...this.events.values()].reduce((sum, e) => sum + e.refused, 0);
  }

  get acceptedDeliveries(): number {
    return [...this.events.values()].reduce((sum, e) => sum + e.accepted, 0);
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private receive(headers: Record<string, string>, body: string): number {
    const id = headers['webhook-id'] ?? '';
    const payload = this.verified(body, headers);
    if (!payload) {
      this.unverified.push(id);
      return 400;
    }
    const event = this.events.get(id) ?? { type: payload.type, envelopeId: payload.data?.envelope?.id, accepted: 0, refused: 0 };
    this.events.set(id, event);
    if (event.accepted === 0 && event.refused === 0 && this.failsFirst(id)) {
      event.refused += 1;
      return 500;
    }
    event.accepted += 1;
    return 204;
  }

  private verified(body: string, headers: Record<string, string>): { type: string; data?: { envelope?: { id?: string } } } | undefined {
    for (const verifier of this.verifiers) {
      try {
        return verifier.verify(body, headers) as { type: string; data?: { envelope?: { id?: string } } };
      } catch {
        // another endpoint's secret
      }
    }
    return undefined;
  }

  private failsFirst(id: string): boolean {
    return createHash('sha256').update(id).digest()[0]! % this.failOneIn === 0;
  }
}
