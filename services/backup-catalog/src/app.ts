import type { Express, Request } from 'express';
import { createStrataApp } from '@sigil/kit/api/strata';
import { mountStrataSubgraph } from '@sigil/kit/graphql';
import { mountHealth, type Health, type ReadinessCheck } from '@sigil/kit/http';
import type { Logger } from '@sigil/kit/log';
import type { StrataPrincipalVerifier } from '@sigil/kit/auth';
import { STRATA } from '@sigil/proto/strata';
import { loadStrataOpenApi, strataOpenApiYaml } from '@sigil/proto/strata-openapi';
import { createAuditLog } from './console/audit.ts';
import { createBackupQueries } from './backups/backup-queries.ts';
import { createChangeQueries } from './change-capture/changes.ts';
import { targetChanges } from './change-capture/change-summaries.ts';
import { segmentPreviews } from './change-capture/previews.ts';
import type { BackupDeps } from './backups/backups.ts';
import type { EventHub } from './console/events.ts';
import { readInventory } from './backups/inventory.ts';
import { diffBackups } from './backups/backup-diff.ts';
import { createPinService } from './backups/pins.ts';
import { createResourceAdmin } from './resources/resource-admin.ts';
import type { RestoreService } from './restores/restores.ts';
import { createRestoreQueries } from './restores/restore-queries.ts';
import { readSettings } from './console/settings.ts';
import { mountInternalRoutes } from './internal-routes.ts';
import type { SandboxRestores } from './restores/sandbox-restores.ts';
import { streamEvents } from './console/sse.ts';
import { createVisibility } from './console/visibility.ts';
import { createResolvers, typeDefs } from './subgraph.ts';
import type { StatusWriter } from './resources/status.ts';
import type { TargetService } from './console/targets.ts';
import type { Lifecycle } from './lifecycle/lifecycle.ts';

export interface CatalogAppDeps extends BackupDeps {
  log: Logger;
  verifyPrincipal: StrataPrincipalVerifier;
  targets: TargetService;
  restores: RestoreService;
  sandboxRestores: SandboxRestores;
  /** Writes the resources' status and finds what an apply names that is missing. */
  status: StatusWriter;
  hub: EventHub;
  /** Reported by whoami; when absent, the address the caller reached the gateway at. */
  externalUrl?: string;
  readiness?: Record<string, ReadinessCheck>;
  /** Called after changes that may free or need a slot (apply, pin): the scheduler runs a pass. */
  kick: () => void;
  /** Checks a store (creating its bucket when writable) and mirrors its backups. */
  mirrorStore: (namespace: string, name: string) => Promise<number>;
  /** Retention and garbage collection. */
  lifecycle: Lifecycle;
}

/** The console API: thin handlers over the catalog's use cases. */
export async function createApp(deps: CatalogAppDeps): Promise<{ app: Express; health: Health }> {
  const { db, targets, restores } = deps;
  const restoreQueries = createRestoreQueries({ db, resources: deps.resources, targets });
  const visibility = createVisibility({ db, targets });
  const backups = createBackupQueries({ db, targets, restores: restoreQueries, visibility });
  const pins = createPinService(deps);
  const audit = createAuditLog(db);
  const admin = createResourceAdmin(deps);
  const changes = createChangeQueries({ db, resources: deps.resources, targets });
  const { sandboxRestores } = deps;
  let health: Health | undefined;
  const app = await createStrataApp({
    document: loadStrataOpenApi(),
    service: 'backup-catalog',
    log: deps.log,
    verifyPrincipal: deps.verifyPrincipal,
    recordWrite: (record) => audit.record(record),
    mount: async (app) => {
      health = mountHealth(app, { database: async () => void (await db.$queryRawUnsafe('SELECT 1')), ...deps.readiness });
      mountInternalRoutes(app, { verifyPrincipal: deps.verifyPrincipal, sandboxRestores, log: deps.log });
      const graph = { db, targets, backups, restores: restoreQueries, changes, audit, visibility, clock: deps.clock, inventory: (id: string) => readInventory(deps, id), settings: () => readSettings(db, deps.resources) };
      await mountStrataSubgraph(app, { typeDefs, resolvers: createResolvers(graph), verifyStrataPrincipal: deps.verifyPrincipal, log: deps.log });
    },
    handlers: {
      getWhoami: async ({ principal, req }) => ok({ principal, version: STRATA.version, externalURL: deps.externalUrl ?? addressUsed(req) }),
      getOpenApi: async ({ req }) => {
        if (req.accepts(['application/yaml', 'application/json']) === 'application/json') return ok(loadStrataOpenApi());
        return { status: 200, body: strataOpenApiYaml(), headers: { 'content-type': 'application/yaml; charset=utf-8' } };
      },
      getSettings: async () => ok(await readSettings(db, deps.resources)),
      listTargets: async ({ principal, query }) => ok(await targets.list(principal, query)),
      getTarget: async ({ principal, params }) => ok(await targets.detail(principal, params.ns, params.name)),
      suspendTarget: async ({ principal, params }) => ok(await targets.suspend(principal, params.ns, params.name)),
      resumeTarget: async ({ principal, params }) => ok(await targets.resume(principal, params.ns, params.name)),
      backupNow: async ({ principal, params, query, body, setAuditObject }) => {
        const action = await targets.backupNow(principal, params.ns, params.name, body?.reason ?? '', { skipLoadGuard: query.skipLoadGuard === true });
        setAuditObject(action.name);
        return { status: 202, body: action };
      },
      listTargetBackups: async ({ principal, params, query }) => ok(await backups.forTarget(principal, params.ns, params.name, Number(query.limit ?? 100))),
      listSegments: async ({ principal, query }) => ok(await changes.segments(principal, query.since)),
      listTargetSegments: async ({ principal, params, query }) => ok(await changes.targetSegments(principal, params.ns, params.name, query.since)),
      getTargetChanges: async ({ principal, params, query }) => ok(await targetChanges({ db, targets, now: deps.clock }, principal, params.ns, params.name, query)),
      getSegmentPreviews: async ({ principal, params }) => ok(await segmentPreviews({ ...deps, targets }, principal, params.ns, params.name, params.segment)),
      planRestore: async ({ principal, params, query }) => ok(await changes.plan(principal, params.ns, params.name, query.at)),
      getBackup: async ({ principal, params }) => ok(await backups.get(principal, params.id)),
      getBackupInventory: async ({ principal, params }) => {
        await visibility.backup(principal, params.id);
        return ok(await readInventory(deps, params.id));
      },
      diffBackups: async ({ principal, params }) => ok(await diffBackups({ ...deps, visibility }, principal, params.id, params.other)),
      pinBackup: async ({ principal, params, body, setAuditObject }) => {
        await visibility.backup(principal, params.id);
        const action = await pins.pin(principal, params.id, body ?? {});
        setAuditObject(action.name);
        return ok(action);
      },
      unpinBackup: async ({ principal, params, setAuditObject }) => {
        await visibility.backup(principal, params.id);
        const action = await pins.unpin(params.id);
        setAuditObject(action.name);
        return ok(action);
      },
      collectStoreGarbage: async ({ params, query, setAuditObject }) => {
        setAuditObject(`BackupStore/${params.ns}/${params.name}`);
        return ok(await deps.lifecycle.gc(params.ns, params.name, query.dryRun === true));
      },
      listRestores: async ({ principal, query }) => ok({ restores: await restoreQueries.list(principal, Number(query.limit ?? 100), query.target) }),
      createRestore: async ({ principal, body, setAuditObject }) => {
        // Without a mode it is the restore service's: it refuses the request with a 400 naming mode.
        const action = body.mode === 'sandbox' ? await sandboxRestores.request(principal, body) : await restores.request(principal, body);
        setAuditObject(action.name);
        return { status: 202, body: action };
      },
      getRestore: async ({ principal, params }) => ok({ restore: await restoreQueries.get(principal, params.ns, params.name) }),
      getActivity: async ({ principal, query }) => ok(await backups.activity(principal, Number(query.limit ?? 50))),
      listAudit: async ({ principal, query }) =>
        ok({ events: await visibility.auditEvents(principal, await audit.list({ action: query.action, user: query.user, limit: Number(query.limit ?? 100) })) }),
      streamEvents: async ({ req, res }) => streamEvents(req, res, deps.hub),
      applyResources: async ({ principal, body, setAuditObject }) => {
        const result = await admin.apply(body, principal);
        setAuditObject(result.applied.map((i) => `${i.kind}/${i.namespace}/${i.name}`).join(','), { applied: result.applied });
        return ok(result);
      },
      listResources: async ({ query }) => ok({ resources: await admin.list(query.kind) }),
      getResource: async ({ params }) => ok(await admin.get(params.kind, params.ns, params.name)),
      deleteResource: async ({ params }) => ok(await admin.remove(params.kind, params.ns, params.name)),
      listSecrets: async () => ok({ secrets: await admin.listSecrets() }),
      putSecret: async ({ params, body }) => ok(await admin.putSecret(params.ns, params.name, body.data)),
      deleteSecret: async ({ params }) => ok(await admin.removeSecret(params.ns, params.name)),
    },
  });
  return { app, health: health as Health };
}

const ok = (body: unknown) => ({ status: 200, body });

/** `proto://host` as the caller saw it, from the gateway's forwarding headers. */
function addressUsed(req: Request): string {
  const first = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value)?.split(',')[0]?.trim();
  const proto = first(req.headers['x-forwarded-proto']) || 'http';
  return `${proto}://${first(req.headers['x-forwarded-host']) || req.headers.host || ''}`;
}
