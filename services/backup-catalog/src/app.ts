import type { Express, Request, Response } from 'express';
import { AppError } from '@sigil/kit/errors';
import { createStrataApp, type WriteRecord } from '@sigil/kit/api';
import { mountHealth, type Health, type ReadinessCheck } from '@sigil/kit/http';
import { type Logger } from '@sigil/kit/log';
import { type StrataPrincipalVerifier } from '@sigil/kit/auth';
import { STRATA, strataOpenApiYaml, loadStrataOpenApi, type StrataPrincipal } from '@sigil/proto';
import { BACKUP_PHASES, type BackupDeps } from './backups.ts';
import { catalogVersion, type Db } from './db.ts';
import type { EventHub, ConsoleEvent } from './events.ts';
import { readInventory } from './inventory.ts';
import { STORED_KINDS, type StoredKind } from './resources.ts';
import type { RestoreRequest, RestoreService } from './restores.ts';
import type { PolicySpec, StoreSpec } from './specs.ts';
import type { TargetService } from './targets.ts';
import { backupRunView, backupView, manifestView, tagsView } from './views.ts';
import { parseDuration } from '@sigil/proto';

export interface CatalogAppDeps extends BackupDeps {
  log: Logger;
  verifyPrincipal: StrataPrincipalVerifier;
  targets: TargetService;
  restores: RestoreService;
  hub: EventHub;
  /** Reported by whoami; when absent, the address the caller reached the gateway at. */
  externalUrl?: string;
  readiness?: Record<string, ReadinessCheck>;
  /** Called after changes that may free or need a slot (apply, pin): the scheduler runs a pass. */
  kick: () => void;
  /** Checks a store (creating its bucket when writable) and mirrors its backups. */
  mirrorStore: (namespace: string, name: string) => Promise<number>;
}

const KEEP_ALIVE_MS = 15_000;

export async function createApp(deps: CatalogAppDeps): Promise<{ app: Express; health: Health }> {
  const { db, targets, restores, resources, secrets } = deps;
  let health: Health | undefined;
  const app = await createStrataApp({
    document: loadStrataOpenApi(),
    service: 'backup-catalog',
    log: deps.log,
    verifyPrincipal: deps.verifyPrincipal,
    recordWrite: (record) => recordAudit(db, record),
    mount: (app) => {
      health = mountHealth(app, { database: async () => void (await db.$queryRawUnsafe('SELECT 1')), ...deps.readiness });
    },
    handlers: {
      getWhoami: async ({ principal, req }) => ok({ principal, version: STRATA.version, externalURL: deps.externalUrl ?? addressUsed(req) }),
      getOpenApi: async ({ req }) => {
        if (req.accepts(['application/yaml', 'application/json']) === 'application/json') return ok(loadStrataOpenApi());
        return { status: 200, body: strataOpenApiYaml(), headers: { 'content-type': 'application/yaml; charset=utf-8' } };
      },
      getSettings: async () => {
        const [stores, policies, version, targetCount, backupCount] = await Promise.all([
          resources.list<StoreSpec>(db, 'BackupStore'),
          resources.list<PolicySpec>(db, 'BackupPolicy'),
          catalogVersion(db),
          db.resource.count({ where: { kind: 'BackupTarget' } }),
          db.backup.count({ where: { phase: BACKUP_PHASES.succeeded } }),
        ]);
        return ok({
          stores: stores.map((s) => ({
            name: s.metadata.name,
            endpoint: s.spec.s3.endpoint,
            region: s.spec.s3.region,
            bucket: s.spec.s3.bucket,
            prefix: s.spec.prefix ?? '',
            phase: String(s.status.phase ?? 'Pending'),
            message: String(s.status.message ?? ''),
            readOnly: s.spec.readOnly ?? false,
          })),
          policies: policies.map((p) => ({
            namespace: p.metadata.namespace,
            name: p.metadata.name,
            store: p.spec.store,
            schedule: p.spec.full.schedule,
            verify: p.spec.verify?.schedule ?? '',
            retention: Object.entries(p.spec.retain ?? {}).map(([k, v]) => `${k}=${v}`).join(' '),
            pitr: p.spec.pitr?.enabled ?? false,
          })),
          version: STRATA.version,
          catalog: { targets: targetCount, backups: backupCount, version: Number(version) },
        });
      },
      listTargets: async ({ principal, query }) => ok(await targets.list(principal, query as Record<string, string>)),
      getTarget: async ({ principal, params }) => ok(await targets.detail(principal, params.ns as string, params.name as string)),
      suspendTarget: async ({ principal, params }) => ok(await targets.suspend(principal, params.ns as string, params.name as string)),
      resumeTarget: async ({ principal, params }) => ok(await targets.resume(principal, params.ns as string, params.name as string)),
      backupNow: async ({ principal, params, body, setAuditObject }) => {
        const action = await targets.backupNow(principal, params.ns as string, params.name as string, reasonOf(body));
        setAuditObject(action.name);
        return { status: 202, body: action };
      },
      listTargetBackups: async ({ principal, params, query }) => {
        const { ns, name } = params as { ns: string; name: string };
        await targets.detail(principal, ns, name);
        const rows = await db.backup.findMany({ where: { namespace: ns, targetName: name }, orderBy: [{ queuedAt: 'desc' }, { id: 'desc' }], take: Number(query.limit ?? 100) });
        return ok({ target: `${ns}/${name}`, backups: rows.map(backupView) });
      },
      getBackup: async ({ params }) => {
        const row = await findBackup(db, params.id as string);
        return ok({ backup: backupView(row), manifest: manifestView(row), tags: tagsView(row) });
      },
      getBackupInventory: async ({ params }) => ok(await readInventory(deps, params.id as string)),
      pinBackup: async ({ principal, params, body, setAuditObject }) => {
        const row = await findBackup(db, params.id as string);
        const { expires, reason } = (body ?? {}) as { expires?: string; reason?: string };
        const pinExpires = expires ? pinExpiry(expires, deps.clock()) : null;
        await db.backup.update({ where: { id: row.id }, data: { pinned: true, pinReason: reason ?? '', pinnedBy: principal.email || principal.id, pinExpires } });
        setAuditObject(row.name);
        return ok({ message: `Backup ${row.id} pinned${pinExpires ? ` until ${pinExpires.toISOString()}` : ''}.`, kind: 'Backup', namespace: row.namespace, name: row.name, link: `/backups/${row.id}` });
      },
      unpinBackup: async ({ params, setAuditObject }) => {
        const row = await findBackup(db, params.id as string);
        await db.backup.update({ where: { id: row.id }, data: { pinned: false, pinReason: null, pinnedBy: null, pinExpires: null } });
        setAuditObject(row.name);
        return ok({ message: `Backup ${row.id} unpinned.`, kind: 'Backup', namespace: row.namespace, name: row.name, link: `/backups/${row.id}` });
      },
      listRestores: async ({ query }) => ok({ restores: await restores.list(Number(query.limit ?? 100), query.target as string | undefined) }),
      createRestore: async ({ principal, body, setAuditObject }) => {
        const action = await restores.request(principal, body as RestoreRequest);
        setAuditObject(action.name);
        return { status: 202, body: action };
      },
      getRestore: async ({ params }) => ok({ restore: await restores.get(params.ns as string, params.name as string) }),
      getActivity: async ({ query }) => {
        const limit = Number(query.limit ?? 50);
        const [backups, recent] = await Promise.all([
          db.backup.findMany({ where: { mirrored: false }, orderBy: [{ queuedAt: 'desc' }, { id: 'desc' }], take: limit }),
          restores.list(limit),
        ]);
        return ok({ backups: backups.map(backupRunView), restores: recent });
      },
      listAudit: async ({ query }) => {
        const rows = await db.auditEvent.findMany({
          where: { ...(query.action ? { action: String(query.action) } : {}), ...(query.user ? { user: String(query.user) } : {}) },
          orderBy: [{ time: 'desc' }, { id: 'desc' }],
          take: Number(query.limit ?? 100),
        });
        return ok({
          events: rows.map((r) => ({ time: r.time.toISOString(), user: r.user, role: r.role, action: r.action, target: r.target, object: r.object, outcome: r.outcome, from: r.from, detail: r.detail })),
        });
      },
      streamEvents: async ({ req, res }) => streamEvents(req, res, deps.hub),
      applyResources: async ({ principal, body, setAuditObject }) => {
        const result = await resources.apply(body, principal, {
          backup: async (tx, doc, who) => {
            if (typeof doc.spec.backupID === 'string' && doc.spec.backupID) {
              const known = await tx.backup.findUnique({ where: { id: doc.spec.backupID } });
              if (!known) throw new AppError('unprocessable', `Backup ${doc.namespace}/${doc.name}: backupID ${doc.spec.backupID} is not in any store the catalog has mirrored.`);
              return 'unchanged';
            }
            if (await tx.backup.findUnique({ where: { namespace_name: { namespace: doc.namespace, name: doc.name } } })) return 'unchanged';
            await targets.queueFromResource(tx, doc.namespace, doc.name, doc.spec, who);
            return 'created';
          },
          restore: (tx, doc, who) => restores.fromResource(tx, doc.namespace, doc.name, doc.spec, who),
        });
        setAuditObject(result.items.map((i) => `${i.kind}/${i.namespace}/${i.name}`).join(','), { applied: result.items });
        for (const item of result.items) {
          if (item.kind === 'BackupStore' && item.action !== 'unchanged') await deps.mirrorStore(item.namespace, item.name);
        }
        if (result.version > 0n) {
          deps.notify({ kind: 'catalog', namespace: '', name: '', phase: '', stage: '', message: 'resources applied', bytes: 0, version: Number(result.version) });
          deps.kick();
        }
        const changed = result.items.filter((i) => i.action !== 'unchanged').length;
        return ok({ applied: result.items, message: `${result.items.length} resource(s) applied, ${changed} changed.` });
      },
      listResources: async ({ query }) => {
        const kind = query.kind as string | undefined;
        if (kind && !STORED_KINDS.includes(kind as StoredKind)) throw new AppError('validation-failed', `kind: must be one of ${STORED_KINDS.join(', ')}`);
        return ok({ resources: await resources.list(db, kind as StoredKind | undefined) });
      },
      getResource: async ({ params }) => {
        const resource = await resources.get(db, storedKind(params.kind as string), params.ns as string, params.name as string);
        if (!resource) throw new AppError('not-found', `${params.kind} ${params.ns}/${params.name} was not found.`);
        return ok(resource);
      },
      deleteResource: async ({ params }) => {
        const kind = storedKind(params.kind as string);
        const { ns, name } = params as { ns: string; name: string };
        if (kind === 'BackupTarget' && (await db.backup.count({ where: { namespace: ns, targetName: name, phase: { in: [BACKUP_PHASES.queued, BACKUP_PHASES.running] } } }))) {
          throw new AppError('conflict', `Target ${ns}/${name} has a backup in progress; wait for it to finish.`);
        }
        if (!(await resources.remove(kind, ns, name))) throw new AppError('not-found', `${kind} ${ns}/${name} was not found.`);
        return ok({ message: `${kind} ${ns}/${name} deleted. Its backups stay in the store.`, kind, namespace: ns, name });
      },
      listSecrets: async () => ok({ secrets: await secrets.list(db) }),
      putSecret: async ({ params, body }) => {
        const { ns, name } = params as { ns: string; name: string };
        const action = await secrets.put(db, ns, name, (body as { data: Record<string, string> }).data);
        return ok({ message: `Secret ${ns}/${name} ${action}.`, kind: 'Secret', namespace: ns, name });
      },
      deleteSecret: async ({ params }) => {
        const { ns, name } = params as { ns: string; name: string };
        if (!(await secrets.remove(db, ns, name))) throw new AppError('not-found', `Secret ${ns}/${name} was not found.`);
        return ok({ message: `Secret ${ns}/${name} deleted.`, kind: 'Secret', namespace: ns, name });
      },
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

function reasonOf(body: unknown): string {
  const reason = (body as { reason?: unknown } | undefined)?.reason;
  return typeof reason === 'string' ? reason : '';
}

function storedKind(kind: string): StoredKind {
  const match = STORED_KINDS.find((k) => k.toLowerCase() === kind.toLowerCase());
  if (!match) throw new AppError('not-found', `Unknown kind ${kind}; kinds are ${STORED_KINDS.join(', ')}.`);
  return match;
}

async function findBackup(db: Db, id: string) {
  const row = await db.backup.findUnique({ where: { id } });
  if (!row) throw new AppError('not-found', `Backup ${id} was not found.`);
  return row;
}

/** `expires` is a duration from now (`30d`) or an RFC 3339 time. */
function pinExpiry(expires: string, now: Date): Date {
  if (/^\d{4}-\d{2}-\d{2}T/.test(expires)) {
    const at = new Date(expires);
    if (Number.isNaN(at.getTime())) throw new AppError('validation-failed', `expires: "${expires}" is not a valid time`);
    return at;
  }
  try {
    return new Date(now.getTime() + parseDuration(expires));
  } catch {
    throw new AppError('validation-failed', `expires: "${expires}" is neither a duration nor an RFC 3339 time`);
  }
}

async function recordAudit(db: Db, record: WriteRecord): Promise<void> {
  await db.auditEvent.create({ data: { ...record, detail: record.detail as never } });
}

/** Frames: `event: <kind>`, `id: <version>`, `data: <Event JSON>`; a `: keep-alive` comment every 15 s. */
function streamEvents(req: Request, res: Response, hub: EventHub): void {
  res.status(200);
  res.setHeader('content-type', 'text/event-stream; charset=utf-8');
  res.setHeader('cache-control', 'no-cache, no-transform');
  res.setHeader('x-accel-buffering', 'no');
  res.flushHeaders();
  res.write('retry: 3000\n\n');
  const write = (events: ConsoleEvent[]) => {
    for (const event of events) res.write(`event: ${event.kind}\nid: ${event.version}\ndata: ${JSON.stringify(event)}\n\n`);
  };
  const unsubscribe = hub.subscribe(write);
  const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), KEEP_ALIVE_MS);
  req.on('close', () => {
    clearInterval(keepAlive);
    unsubscribe();
  });
}

export type { StrataPrincipal };
