/**
 * SCIM 2.0 (RFC 7643/7644) at `/scim/v2` for identity providers: Users (with the enterprise extension) and Groups,
 * ServiceProviderConfig, Schemas and ResourceTypes, served by SCIMMY's routers. Around them: the organization's
 * bearer token (tokens.ts) and the plan's `scim`, Entra's non-standard bodies made standard (normalize.ts), and the
 * list endpoints answered from the database (filters.ts) so `totalResults` and `startIndex` paging are exact.
 * SCIMMY keeps its resource handlers in module state: they are declared once and read everything they need (database,
 * clock, organization) from the request's context, so several apps in one process each serve their own database
 * (SCIMMY's resource locations are module state too: apps in one process share one public URL).
 */
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import SCIMMY from 'scimmy';
import SCIMMYRouters from 'scimmy-routers';
import type { EntitlementsCache } from '@sigil/kit/entitlements';
import { SCIM_PATH } from '@sigil/proto/routes';
import { clientAddress } from '@sigil/kit/http';
import type { Logger } from '@sigil/kit/log';
import type { Db } from '../db.ts';
import { asScimError, SCIM_CONTENT_TYPE, scimError, scimErrorBody } from './errors.ts';
import { groupFilterWhere, IN_MEMORY_FILTER_LIMIT, userFilterWhere } from './filters.ts';
import { createScimGroup, deleteScimGroup, findScimGroups, getScimGroup, replaceScimGroup, type GroupResource } from './groups.ts';
import { normalizeAttributes, normalizePatch } from './normalize.ts';
import { scimEndpoint, type ScimTokenService } from './tokens.ts';
import { createScimUser, deleteScimUser, findScimUsers, getScimUser, replaceScimUser, type ScimContext, type UserResource } from './users.ts';

/** Where the router is mounted (the gateway forwards this prefix to accounts). */
export const SCIM_BASE_PATH = SCIM_PATH;
/** The largest page a list answers (ServiceProviderConfig `filter.maxResults`); `count` above it is lowered. */
export const SCIM_MAX_RESULTS = 200;
const DEFAULT_COUNT = 100;
const BODY_LIMIT = '1mb';

export interface ScimProtocolDeps {
  db: Db;
  clock: () => Date;
  log: Logger;
  entitlements: EntitlementsCache;
  tokens: ScimTokenService;
  publicUrl: string;
}

interface RequestState {
  context: ScimContext;
  publicUrl: string;
}

const states = new WeakMap<Request, RequestState>();

function stateOf(req: Request): RequestState {
  const state = states.get(req);
  if (!state) throw scimError(401, null, 'The request is not authenticated.');
  return state;
}

/** Our refusals become SCIM errors (SCIMMY would answer any other error as a 404). */
const guarded =
  <A extends unknown[], R>(work: (...args: A) => Promise<R>) =>
  async (...args: A): Promise<R> => {
    try {
      return await work(...args);
    } catch (error) {
      throw asScimError(error);
    }
  };

const plain = <T>(instance: unknown): T => JSON.parse(JSON.stringify(instance)) as T;

type ResourceWithId = { id?: string };

let scimmyRouter: Router | undefined;

/** Declares Users and Groups with SCIMMY and builds its routers, once per process. */
function scimmyRouters(): Router {
  if (scimmyRouter) return scimmyRouter;
  SCIMMY.Resources.declare(
    SCIMMY.Resources.User.extend(SCIMMY.Schemas.EnterpriseUser, false)
      .ingress(guarded(async (resource: ResourceWithId, instance: unknown, ctx: ScimContext) => {
        const body = plain<UserResource>(instance);
        return resource.id ? replaceScimUser(ctx, resource.id, body) : createScimUser(ctx, body);
      }) as never)
      .egress(guarded(async (resource: ResourceWithId, ctx: ScimContext) => {
        if (!resource.id) throw scimError(501, null, 'Search Users with GET /Users?filter=...');
        return getScimUser(ctx, resource.id);
      }) as never)
      .degress(guarded(async (resource: ResourceWithId, ctx: ScimContext) => deleteScimUser(ctx, resource.id as string)) as never),
  );
  SCIMMY.Resources.declare(
    SCIMMY.Resources.Group.ingress(guarded(async (resource: ResourceWithId, instance: unknown, ctx: ScimContext) => {
      const body = plain<GroupResource>(instance);
      return resource.id ? replaceScimGroup(ctx, resource.id, body) : createScimGroup(ctx, body);
    }) as never)
      .egress(guarded(async (resource: ResourceWithId, ctx: ScimContext) => {
        if (!resource.id) throw scimError(501, null, 'Search Groups with GET /Groups?filter=...');
        return getScimGroup(ctx, resource.id);
      }) as never)
      .degress(guarded(async (resource: ResourceWithId, ctx: ScimContext) => deleteScimGroup(ctx, resource.id as string)) as never),
  );
  const router = new SCIMMYRouters({
    type: 'bearer',
    // Authentication happened before (`admit` in createScimRouter); returning no user id makes /Me answer 501.
    handler: () => undefined as unknown as string,
    context: (req) => stateOf(req).context,
    baseUri: (req) => stateOf(req).publicUrl,
  });
  SCIMMY.Config.set({ patch: true, filter: SCIM_MAX_RESULTS, bulk: false, sort: false, etag: false, changePassword: false });
  scimmyRouter = router as unknown as Router;
  return scimmyRouter;
}

function sendScimError(res: Response, status: number, scimType: Parameters<typeof scimErrorBody>[1], detail: string): void {
  res.status(status).type(SCIM_CONTENT_TYPE).send(JSON.stringify(scimErrorBody(status, scimType, detail)));
}

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

function integer(value: unknown): number | undefined {
  if (typeof value !== 'string' || !/^-?\d{1,9}$/.test(value.trim())) return undefined;
  return Number(value);
}

function text(query: Record<string, unknown>, name: string): string | undefined {
  const value = query[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw scimError(400, 'invalidValue', `Query parameter ${name} must be given once.`);
  return value;
}

type ResourceClass = typeof SCIMMY.Resources.User | typeof SCIMMY.Resources.Group;
type SchemaClass = typeof SCIMMY.Schemas.User | typeof SCIMMY.Schemas.Group;

interface ListSpec<W> {
  Resource: ResourceClass;
  Schema: SchemaClass;
  endpoint: string;
  where: (filter: Record<string, unknown>[]) => W | undefined;
  find: (ctx: ScimContext, where: W, page: { skip: number; take: number }) => Promise<{ total: number; resources: Record<string, unknown>[] }>;
}

/** GET /Users and GET /Groups: filter, attributes, `startIndex` (1-based) and `count` (at most SCIM_MAX_RESULTS). */
function listHandler<W>(spec: ListSpec<W>) {
  return async (req: Request, res: Response): Promise<void> => {
    const { context, publicUrl } = stateOf(req);
    const query = req.query as Record<string, unknown>;
    const startIndex = Math.max(1, integer(text(query, 'startIndex')) ?? 1);
    const count = Math.min(SCIM_MAX_RESULTS, Math.max(0, integer(text(query, 'count')) ?? DEFAULT_COUNT));
    const config = Object.fromEntries(['filter', 'attributes', 'excludedAttributes'].map((name) => [name, text(query, name)]).filter(([, value]) => value !== undefined));
    const request = new spec.Resource(config);
    const filter = request.filter as unknown as Record<string, unknown>[] | undefined;
    const where = filter ? spec.where(filter) : ({} as W);
    let page: { total: number; resources: Record<string, unknown>[] };
    if (where !== undefined) {
      page = await spec.find(context, where, { skip: startIndex - 1, take: count });
    } else {
      const all = await spec.find(context, {} as W, { skip: 0, take: IN_MEMORY_FILTER_LIMIT });
      const basepath = `${scimEndpoint(publicUrl)}${spec.endpoint}`;
      const matched = (request.filter as InstanceType<typeof SCIMMY.Types.Filter>).match(all.resources.map((r) => plain(new spec.Schema(r, 'out', basepath))));
      const ids = new Set(matched.map((r: { id: string }) => r.id));
      const kept = all.resources.filter((r) => ids.has(r.id as string));
      page = { total: kept.length, resources: kept.slice(startIndex - 1, startIndex - 1 + count) };
    }
    const basepath = `${scimEndpoint(publicUrl)}${spec.endpoint}`;
    const Resources = page.resources.map((r) => new spec.Schema(r, 'out', basepath, request.attributes));
    res.status(200).type(SCIM_CONTENT_TYPE).send(
      JSON.stringify({ schemas: [SCIMMY.Messages.ListResponse.id], totalResults: page.total, startIndex, itemsPerPage: Resources.length, Resources }),
    );
  };
}

const asyncRoute = (handler: (req: Request, res: Response) => Promise<void>) => (req: Request, res: Response, next: NextFunction) => void handler(req, res).catch(next);

/** The `/scim/v2` router; mount it with `app.use(SCIM_BASE_PATH, createScimRouter(deps))`. */
export function createScimRouter(deps: ScimProtocolDeps): Router {
  const router = express.Router();

  /** The token's organization, on the plan's `scim`; false when refused (the answer is sent). */
  async function admit(req: Request, res: Response): Promise<boolean> {
    const bearer = BEARER.exec(req.headers.authorization ?? '')?.[1];
    const organizationId = bearer ? await deps.tokens.authenticate(bearer) : undefined;
    if (!organizationId) {
      res.setHeader('www-authenticate', 'Bearer realm="SCIM"');
      sendScimError(res, 401, null, 'The SCIM token is missing, unknown or revoked; create one in Settings → SCIM.');
      return false;
    }
    const plan = await deps.entitlements.get(organizationId);
    if (!plan.features.scim) {
      sendScimError(res, 403, null, `SCIM provisioning is not on the ${plan.planName} plan. Upgrade to use it.`);
      return false;
    }
    states.set(req, { context: { db: deps.db, clock: deps.clock, organizationId, ip: clientAddress(req) }, publicUrl: deps.publicUrl });
    return true;
  }
  // Authentication first: nobody without the token gets a body read.
  router.use((req, res, next) => void admit(req, res).then((admitted) => admitted && next(), next));
  router.use(express.json({ type: [SCIM_CONTENT_TYPE, 'application/json'], limit: BODY_LIMIT }));
  router.use((req, _res, next) => {
    if (req.method === 'PATCH') req.body = normalizePatch(req.body);
    else if (req.method === 'POST' || req.method === 'PUT') req.body = normalizeAttributes(req.body);
    next();
  });

  router.get('/Users', asyncRoute(listHandler({ Resource: SCIMMY.Resources.User, Schema: SCIMMY.Schemas.User, endpoint: '/Users', where: userFilterWhere, find: findScimUsers })));
  router.get('/Groups', asyncRoute(listHandler({ Resource: SCIMMY.Resources.Group, Schema: SCIMMY.Schemas.Group, endpoint: '/Groups', where: groupFilterWhere, find: findScimGroups })));
  router.post(['/.search', '/Users/.search', '/Groups/.search'], (_req, res) => sendScimError(res, 501, null, 'POST .search is not supported; use GET with filter, startIndex and count.'));
  router.use(scimmyRouters());

  router.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const status = (error as { status?: number; statusCode?: number }).status ?? (error as { statusCode?: number }).statusCode ?? 500;
    if (status >= 500) deps.log.error({ err: (error as Error).cause ?? error }, 'SCIM request failed');
    if (res.headersSent) return;
    if ((error as { type?: string }).type === 'entity.parse.failed') return sendScimError(res, 400, 'invalidSyntax', 'The request body is not valid JSON.');
    if ((error as { type?: string }).type === 'entity.too.large') return sendScimError(res, 413, null, `The request body is larger than ${BODY_LIMIT}.`);
    const scim = asScimError(error);
    sendScimError(res, scim.status, (scim.scimType || null) as Parameters<typeof scimErrorBody>[1], scim.message);
  });
  return router;
}
