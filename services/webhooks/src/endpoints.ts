import type { Principal } from '@sigil/kit/auth';
import { AppError, notFound } from '@sigil/kit/errors';
import { newId } from '@sigil/kit/ids';
import type { Logger } from '@sigil/kit/log';
import { decodeCursor, toPage } from '@sigil/kit/pagination';
import type { components } from '@sigil/proto/api/sigil';
import type { Db } from './db.ts';
import type { WebhookEndpoint } from './generated/prisma/client.ts';
import { newSecret, ROTATION_OVERLAP_MS, type SecretBox } from './secrets.ts';
import { checkUrl, UrlRefused, type UrlPolicy } from '@sigil/kit/http';

export interface EndpointDeps {
  db: Db;
  secrets: SecretBox;
  policy: UrlPolicy;
  clock: () => Date;
  log: Logger;
}

/** The contract's WebhookEndpointHealth over the last 24 hours, its counts always given. */
export type EndpointHealth = Required<components['schemas']['WebhookEndpointHealth']>;

const DAY_MS = 24 * 3_600_000;

/** Keys see their own mode; a dashboard session sees both. */
export const visibleTo = (principal: Principal) => ({ organizationId: principal.organizationId, ...(principal.kind === 'session' ? {} : { testMode: principal.mode === 'test' }) });

/** The API's WebhookEndpoint; the contract allows more members than it fixes (`updatedAt` here). */
export function toEndpointView(row: WebhookEndpoint, health: EndpointHealth) {
  return {
    id: row.id,
    object: 'webhook_endpoint',
    url: row.url,
    description: row.description,
    // Stored as text; only what the contract accepted on create or update is written.
    events: row.events as components['schemas']['WebhookEventType'][],
    enabled: row.enabled,
    testMode: row.testMode,
    health,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  } satisfies components['schemas']['WebhookEndpoint'];
}

export type EndpointView = ReturnType<typeof toEndpointView>;

export function createEndpointService(deps: EndpointDeps) {
  const { db } = deps;

  /** Attempts and failures of the last 24 hours, per endpoint, in one query. */
  async function healthOf(ids: string[]): Promise<Map<string, EndpointHealth>> {
    const since = new Date(deps.clock().getTime() - DAY_MS);
    const rows = ids.length
      ? await db.$queryRawUnsafe<Array<{ endpoint_id: string; attempts: bigint; failures: bigint }>>(
          "SELECT endpoint_id, count(*) AS attempts, count(*) FILTER (WHERE status <> 'succeeded') AS failures FROM webhook_attempts WHERE endpoint_id = ANY($1::text[]) AND attempted_at >= $2 GROUP BY endpoint_id",
          ids,
          since,
        )
      : [];
    const byId = new Map(rows.map((r) => [r.endpoint_id, { attempts: Number(r.attempts), failures: Number(r.failures) }]));
    return new Map(ids.map((id) => {
      const { attempts = 0, failures = 0 } = byId.get(id) ?? {};
      return [id, { successRate: attempts ? Math.round(((attempts - failures) / attempts) * 10_000) / 10_000 : null, attempts, failures }];
    }));
  }

  const view = async (row: WebhookEndpoint) => toEndpointView(row, (await healthOf([row.id])).get(row.id) as EndpointHealth);

  async function requireEndpoint(principal: Principal, id: string): Promise<WebhookEndpoint> {
    const row = await db.webhookEndpoint.findFirst({ where: { id, ...visibleTo(principal) } });
    if (!row) throw notFound(`Webhook endpoint ${id}`);
    return row;
  }

  async function allowedUrl(url: string): Promise<string> {
    try {
      return (await checkUrl(url, deps.policy)).url.toString();
    } catch (error) {
      if (!(error instanceof UrlRefused)) throw error;
      throw new AppError('validation-failed', `The URL ${error.message}.`, { errors: [{ pointer: '/body/url', detail: error.message }] });
    }
  }

  return {
    requireEndpoint,
    healthOf,

    async create(principal: Principal, input: components['schemas']['CreateWebhookEndpoint']) {
      const url = await allowedUrl(input.url);
      const id = newId('we');
      const secret = newSecret();
      const row = await db.webhookEndpoint.create({
        data: { id, organizationId: principal.organizationId, testMode: principal.mode === 'test', url, description: input.description ?? '', events: input.events ?? [], secret: deps.secrets.seal(id, secret), createdAt: deps.clock(), updatedAt: deps.clock() },
      });
      return { ...(await view(row)), secret };
    },

    /** `testMode` narrows a dashboard session's list to one mode (a key sees only its own anyway). */
    async list(principal: Principal, input: { limit: number; cursor?: string; testMode?: boolean }) {
      const [at, id] = input.cursor ? (decodeCursor(input.cursor, 2) as [string, string]) : [];
      const rows = await db.webhookEndpoint.findMany({
        where: { AND: [visibleTo(principal), input.testMode !== undefined ? { testMode: input.testMode } : {}], ...(at ? { OR: [{ createdAt: { lt: new Date(at) } }, { createdAt: new Date(at), id: { lt: id } }] } : {}) },
        orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
        take: input.limit + 1,
      });
      const health = await healthOf(rows.map((r) => r.id));
      return toPage(rows, input.limit, (row) => toEndpointView(row, health.get(row.id) as EndpointHealth), (row) => [row.createdAt.toISOString(), row.id]);
    },

    async get(principal: Principal, id: string) {
      return view(await requireEndpoint(principal, id));
    },

    async update(principal: Principal, id: string, input: components['schemas']['UpdateWebhookEndpoint']) {
      const row = await requireEndpoint(principal, id);
      const url = input.url === undefined ? undefined : await allowedUrl(input.url);
      const updated = await db.webhookEndpoint.update({
        where: { id: row.id },
        data: { ...(url !== undefined ? { url } : {}), ...(input.description !== undefined ? { description: input.description } : {}), ...(input.events !== undefined ? { events: input.events } : {}), ...(input.enabled !== undefined ? { enabled: input.enabled } : {}), updatedAt: deps.clock() },
      });
      return view(updated);
    },

    /** Deleting an endpoint drops its pending deliveries; its past attempts stay for the record. */
    async remove(principal: Principal, id: string) {
      const row = await requireEndpoint(principal, id);
      await db.$transaction([
        db.webhookDelivery.updateMany({ where: { endpointId: row.id, status: 'pending' }, data: { status: 'failed', nextAttemptAt: null } }),
        db.webhookEndpoint.delete({ where: { id: row.id } }),
      ]);
    },

    /** The current secret (dashboard only), recorded with who asked and from where. */
    async reveal(principal: Principal, id: string, from: string) {
      const row = await requireEndpoint(principal, id);
      deps.log.info({ audit: 'webhook.secret_revealed', endpointId: row.id, organizationId: row.organizationId, actor: principal.actorId, from }, 'webhook secret revealed');
      await db.webhookSecretAudit.create({ data: { id: newId('wsa'), endpointId: row.id, organizationId: row.organizationId, action: 'revealed', actorKind: principal.kind, actorId: principal.actorId, from, at: deps.clock() } });
      return { object: 'webhook_endpoint_secret' as const, secret: deps.secrets.open(row.id, row.secret), previousSecretExpiresAt: activePrevious(row, deps.clock()) ? (row.previousSecretExpiresAt as Date).toISOString() : null };
    },

    /** A new secret; the old one keeps signing beside it for 24 hours. */
    async rotate(principal: Principal, id: string, from: string) {
      const row = await requireEndpoint(principal, id);
      const secret = newSecret();
      const expires = new Date(deps.clock().getTime() + ROTATION_OVERLAP_MS);
      await db.webhookEndpoint.update({ where: { id: row.id }, data: { secret: deps.secrets.seal(row.id, secret), previousSecret: row.secret, previousSecretExpiresAt: expires, updatedAt: deps.clock() } });
      await db.webhookSecretAudit.create({ data: { id: newId('wsa'), endpointId: row.id, organizationId: row.organizationId, action: 'rotated', actorKind: principal.kind, actorId: principal.actorId, from, at: deps.clock() } });
      return { object: 'webhook_endpoint_secret' as const, secret, previousSecretExpiresAt: expires.toISOString() };
    },
  };
}

export type EndpointService = ReturnType<typeof createEndpointService>;

type EndpointSecrets = Pick<WebhookEndpoint, 'id' | 'secret' | 'previousSecret' | 'previousSecretExpiresAt'>;

function activePrevious(row: EndpointSecrets, now: Date): boolean {
  return Boolean(row.previousSecret && row.previousSecretExpiresAt && row.previousSecretExpiresAt > now);
}

/** The secrets that sign an attempt now: the current one, and the previous one during its 24 hours. */
export function signingSecrets(row: EndpointSecrets, secrets: SecretBox, now: Date): string[] {
  const current = secrets.open(row.id, row.secret);
  return activePrevious(row, now) ? [current, secrets.open(row.id, row.previousSecret as string)] : [current];
}
