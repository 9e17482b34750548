import { newId } from '@sigil/kit/ids';
import type { Logger } from '@sigil/kit/log';
import type { Db } from './db.ts';
import { signingSecrets } from './endpoints.ts';
import { signedHeaders, type SecretBox } from './secrets.ts';
import type { Sender } from './sender.ts';
import { checkUrl, UrlRefused, type UrlPolicy } from '@sigil/kit/http';

/** Spec part 6: retried after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h and 24 h, for at most three days. */
export const RETRY_DELAYS_MS = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 50_400_000, 72_000_000, 86_400_000] as const;
export const MAX_AGE_MS = 3 * 86_400_000;

export interface DeliveryDeps {
  db: Db;
  sender: Sender;
  policy: UrlPolicy;
  secrets: SecretBox;
  clock: () => Date;
  log: Logger;
  retryDelaysMs?: readonly number[];
  maxAgeMs?: number;
  timeoutMs?: number;
}

/** A leased delivery with what its attempt needs: the endpoint's URL and sealed secrets, and the event's body. */
export type Claimed = {
  id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  attempts: number;
  created_at: Date;
  url: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  body: string;
};

/** What an attempt leaves: the attempt's row and the delivery's next state (written in batches by the recorder). */
export interface AttemptRecord {
  id: string;
  deliveryId: string;
  endpointId: string;
  eventId: string;
  eventType: string;
  attempt: number;
  status: 'pending' | 'succeeded' | 'failed';
  statusCode: number | null;
  error: string | null;
  durationMs: number | null;
  attemptedAt: Date;
  nextAttemptAt: Date | null;
}

/**
 * One attempt of a claimed delivery: the URL checked again (after DNS, the connection pinned to the checked address),
 * signed anew, sent; the outcome says whether the delivery is done, due again on schedule, or failed.
 */
export async function attemptDelivery(deps: DeliveryDeps, delivery: Claimed): Promise<AttemptRecord> {
  const now = deps.clock();
  const endpoint = { id: delivery.endpoint_id, secret: delivery.secret, previousSecret: delivery.previous_secret, previousSecretExpiresAt: delivery.previous_secret_expires_at };
  let result: { ok: boolean; statusCode: number | null; error: string | null; durationMs: number | null };
  try {
    const { url, address } = await checkUrl(delivery.url, deps.policy);
    const headers = signedHeaders({ eventId: delivery.event_id, body: delivery.body, secrets: signingSecrets(endpoint, deps.secrets, now), at: now });
    result = await deps.sender.send({ url, address, headers, body: delivery.body, timeoutMs: deps.timeoutMs ?? 10_000 });
  } catch (error) {
    if (!(error instanceof UrlRefused)) throw error;
    result = { ok: false, statusCode: null, error: `refused: the URL ${error.message}`, durationMs: null };
  }
  const attempt = delivery.attempts + 1;
  const delay = (deps.retryDelaysMs ?? RETRY_DELAYS_MS)[attempt - 1];
  const retryAt = delay === undefined ? null : new Date(now.getTime() + delay);
  const giveUp = retryAt === null || retryAt.getTime() > delivery.created_at.getTime() + (deps.maxAgeMs ?? MAX_AGE_MS);
  const status = result.ok ? 'succeeded' : giveUp ? 'failed' : 'pending';
  if (!result.ok) deps.log.info({ endpointId: delivery.endpoint_id, eventId: delivery.event_id, attempt, error: result.error, status }, 'webhook attempt failed');
  return {
    id: newId('whd'),
    deliveryId: delivery.id,
    endpointId: delivery.endpoint_id,
    eventId: delivery.event_id,
    eventType: delivery.event_type,
    attempt,
    status,
    statusCode: result.statusCode,
    error: result.error,
    durationMs: result.durationMs,
    attemptedAt: now,
    nextAttemptAt: status === 'pending' ? retryAt : null,
  };
}

/**
 * Leases due deliveries for this worker: at most `perEndpoint` of any one endpoint, none of an endpoint this worker
 * is already saturating, so a slow or failing endpoint never holds back the others. A lease that outlives a crashed
 * worker expires and the delivery is tried again (with the same `webhook-id`). One statement, with what the attempts
 * need (URL, secrets, body), so an attempt reads nothing more.
 */
export async function claimDue(db: Db, input: { now: Date; limit: number; perEndpoint: number; busyEndpoints: string[]; leaseMs: number }): Promise<Claimed[]> {
  return db.$queryRawUnsafe<Claimed[]>(
    `WITH candidates AS (
       SELECT id FROM (
         SELECT d.id, d.next_attempt_at, row_number() OVER (PARTITION BY d.endpoint_id ORDER BY d.next_attempt_at) AS rank
         FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
         WHERE d.status = 'pending' AND d.next_attempt_at <= $1 AND (d.leased_until IS NULL OR d.leased_until < $1)
           AND e.enabled AND d.endpoint_id <> ALL($2::text[])
       ) ranked WHERE rank <= $3 ORDER BY next_attempt_at LIMIT $4
     )
     UPDATE webhook_deliveries d SET leased_until = $5
     FROM candidates c, webhook_endpoints e, webhook_events ev
     WHERE d.id = c.id AND e.id = d.endpoint_id AND ev.id = d.event_id
       AND d.status = 'pending' AND (d.leased_until IS NULL OR d.leased_until < $1)
     RETURNING d.id, d.endpoint_id, d.event_id, d.event_type, d.attempts, d.created_at,
       e.url, e.secret, e.previous_secret, e.previous_secret_expires_at, ev.body`,
    input.now,
    input.busyEndpoints,
    input.perEndpoint,
    input.limit,
    new Date(input.now.getTime() + input.leaseMs),
  );
}
