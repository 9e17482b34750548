// Text renderings of the console API objects (docs/strata-api.md, spec part 2.1).
import { cell, flags, humanBytes, humanDuration, keyValues, list, table, time } from './format.ts';

/* eslint-disable @typescript-eslint/no-explicit-any -- answers are rendered defensively, field by field */
type Obj = Record<string, any>;

export interface Action {
  message: string;
  kind?: string;
  namespace?: string;
  name?: string;
  link?: string;
}

export interface StrataEvent {
  kind?: string;
  namespace?: string;
  name?: string;
  phase?: string;
  stage?: string;
  message?: string;
  bytes?: number;
  version?: number;
}

function arr(v: unknown): Obj[] {
  return Array.isArray(v) ? (v.filter((x) => x && typeof x === 'object') as Obj[]) : [];
}

function nsName(ns: unknown, name: unknown): string {
  if (!name) return '-';
  return ns ? `${String(ns)}/${String(name)}` : String(name);
}

export function action(a: Action): string {
  let out = `${a.message || 'ok'}\n`;
  if (a.link) out += `console: ${a.link}\n`;
  return out;
}

export function whoami(w: Obj): string {
  const p: Obj = w.principal ?? {};
  return keyValues([
    ['email', p.email],
    ['id', p.id],
    ['role', p.role],
    ['service', p.service ? true : undefined],
    ['groups', p.groups?.length ? list(p.groups) : undefined],
    ['orgs', p.orgs?.length ? list(p.orgs) : undefined],
    ['projects', p.projects?.length ? list(p.projects) : undefined],
    ['console', w.externalURL],
    ['version', w.version],
  ]);
}

export function settings(s: Obj): string {
  const c: Obj = s.catalog ?? {};
  let out = keyValues([
    ['version', s.version],
    ['catalog', `${c.targets ?? 0} targets, ${c.backups ?? 0} backups (catalog version ${c.version ?? 0})`],
  ]);
  const stores = arr(s.stores);
  out += `\nStores:\n`;
  out += stores.length
    ? table(
        ['name', 'endpoint', 'region', 'bucket', 'prefix', 'phase', 'read-only', 'message'],
        stores.map((x) => [x.name, x.endpoint, x.region, x.bucket, x.prefix, x.phase, x.readOnly ?? false, x.message]),
      )
    : '  (none)\n';
  const policies = arr(s.policies);
  out += `\nPolicies:\n`;
  out += policies.length
    ? table(
        ['policy', 'store', 'schedule', 'retention', 'pitr', 'verify'],
        policies.map((x) => [nsName(x.namespace, x.name), x.store, x.schedule, x.retention, x.pitr ?? false, x.verify]),
      )
    : '  (none)\n';
  return out;
}

function pitrCell(t: Obj): string {
  if (!t.pitr) return 'off';
  if (t.chainBroken) return 'broken';
  return typeof t.lagSeconds === 'number' ? `lag ${humanDuration(t.lagSeconds)}` : 'on';
}

function targetFlags(t: Obj): string {
  return flags([
    [t.suspended, 'suspended'],
    [t.running, 'running'],
    [t.chainBroken, 'chain-broken'],
    [t.onlyInStore, 'only-in-store'],
    [t.replicationDenied, 'replication-denied'],
    [t.gaps, `gaps:${t.gaps}`],
  ]);
}

export function targets(l: Obj): string {
  const ts = arr(l.targets);
  if (!ts.length) return 'No targets.\n';
  return table(
    ['target', 'engine', 'env', 'health', 'last success', 'next run', 'backups', 'stored', 'pitr', 'flags'],
    ts.map((t) => [
      nsName(t.namespace, t.name),
      t.engine,
      t.env,
      t.health,
      time(t.lastSuccess),
      time(t.nextRun),
      t.backups,
      humanBytes(t.storedBytes),
      pitrCell(t),
      targetFlags(t),
    ]),
  );
}

export function targetDetail(d: Obj): string {
  const t: Obj = d.target ?? {};
  const windows = arr(t.windows).map((w) => `${time(w.from)} .. ${time(w.to)}`);
  let out = keyValues([
    ['target', nsName(t.namespace, t.name)],
    ['engine', t.engine],
    ['org', t.org],
    ['project', t.project],
    ['env', t.env],
    ['policy', t.policy],
    ['store', t.store],
    ['phase', t.phase],
    ['health', t.healthReason ? `${cell(t.health)} (${t.healthReason})` : t.health],
    ['message', t.message],
    ['suspended', t.suspended ?? false],
    ['running', t.running],
    ['last success', time(t.lastSuccess)],
    ['last full', t.lastFull ? [t.lastFull.id ?? t.lastFull.name, t.lastFull.phase].filter(Boolean).join(' ') : undefined],
    ['next run', time(t.nextRun)],
    ['last verification', t.lastVerification ? time(t.lastVerification) : undefined],
    ['backups', t.backups],
    ['segments', t.segments],
    ['stored', humanBytes(t.storedBytes)],
    ['pitr', pitrCell(t)],
    ['gaps', t.gaps || undefined],
    ['only in store', t.onlyInStore ? true : undefined],
    ['replication denied', t.replicationDenied],
    ['replication fix', t.replicationFix],
  ]);
  if (windows.length) out += `restore windows:\n${windows.map((w) => `  ${w}\n`).join('')}`;
  return out;
}

export function backups(l: Obj): string {
  const bs = arr(l.backups);
  if (!bs.length) return `No backups${l.target ? ` of ${l.target}` : ''}.\n`;
  return table(
    ['id', 'time', 'databases', 'stored', 'duration', 'flags'],
    bs.map((b) => [
      b.id,
      time(b.time),
      list(b.databases, 3),
      humanBytes(b.storedBytes),
      humanDuration(b.durationSeconds),
      backupFlags(b),
    ]),
  );
}

function backupFlags(b: Obj): string {
  return flags([
    [b.pinned, 'pinned'],
    [b.verified, 'verified'],
    [b.verifyFailed, 'verify-failed'],
    [b.warnings?.length, `warnings:${b.warnings?.length}`],
  ]);
}

export function backupDetail(d: Obj): string {
  const b: Obj = d.backup ?? {};
  const tags: Obj = d.tags ?? {};
  const m: Obj = d.manifest ?? {};
  const ratio = b.rawBytes && b.storedBytes ? ` (${(b.rawBytes / b.storedBytes).toFixed(1)}x)` : '';
  let out = keyValues([
    ['id', b.id],
    ['target', b.target],
    ['engine', b.engine],
    ['mode', b.mode],
    ['server version', b.serverVersion],
    ['consistent at', time(b.time)],
    ['completed', time(b.completed)],
    ['duration', humanDuration(b.durationSeconds)],
    ['raw size', humanBytes(b.rawBytes)],
    ['stored size', `${humanBytes(b.storedBytes)}${ratio}`],
    ['databases', list(b.databases)],
    ['tables', b.tables],
    ['rows (estimate)', b.rowsEstimate],
    ['schema hash', b.schemaHash],
    ['migration', b.migrationVersion],
    ['position', b.position],
    ['tiers', b.tiers?.length ? list(b.tiers) : undefined],
    ['store', b.store],
    ['reason', b.reason],
    ['pinned', (tags.pinned ?? b.pinned) ? pinText(tags, b) : false],
    ['verified', (tags.verified ?? b.verified) ? `yes${tags.verifiedAt ? ` at ${time(tags.verifiedAt)}` : ''}${typeof tags.verifyRTOSeconds === 'number' ? `, RTO ${humanDuration(tags.verifyRTOSeconds)}` : ''}` : false],
    ['verify failed', (tags.verifyFailed ?? b.verifyFailed) ? true : undefined],
    ['objects', Array.isArray(m.objects) ? m.objects.length : undefined],
  ]);
  const warnings: unknown[] = Array.isArray(b.warnings) ? b.warnings : [];
  if (warnings.length) out += `warnings:\n${warnings.map((w) => `  - ${String(w)}\n`).join('')}`;
  return out;
}

function pinText(tags: Obj, b: Obj): string {
  const reason = tags.pinReason ?? b.pinReason;
  const parts = ['yes'];
  if (tags.pinnedBy) parts.push(`by ${tags.pinnedBy}`);
  parts.push(tags.pinExpires ? `until ${time(tags.pinExpires)}` : 'forever');
  return parts.join(' ') + (reason ? ` (${reason})` : '');
}

export function inventory(inv: Obj): string {
  const server: Obj = inv.server ?? {};
  const dbs = arr(inv.databases);
  let out = keyValues([
    ['collected', time(inv.collectedAt)],
    ['engine', inv.engine],
    ['server', [server.version, server.host].filter(Boolean).join(' on ') || undefined],
    ['schema hash', inv.schemaHash],
  ]);
  const notes: unknown[] = Array.isArray(inv.notes) ? inv.notes : [];
  if (notes.length) out += `notes:\n${notes.map((n) => `  - ${String(n)}\n`).join('')}`;
  out += '\n';
  out += dbs.length
    ? table(
        ['database', 'size', 'tables', 'migration', 'schema hash'],
        dbs.map((d) => [d.name, humanBytes(d.sizeBytes), arr(d.tables).length, d.migrationVersion, d.schemaHash]),
      )
    : 'No databases.\n';
  const rows: Array<Array<string | number | undefined>> = [];
  for (const d of dbs) {
    for (const t of arr(d.tables)) {
      rows.push([
        d.name,
        t.schema ? `${t.schema}.${t.name}` : t.name,
        t.kind,
        t.exactRows ?? t.rowsEstimate,
        humanBytes(t.totalBytes),
        Array.isArray(t.columns) ? t.columns.length : undefined,
      ]);
    }
  }
  if (rows.length) out += '\n' + table(['database', 'table', 'kind', 'rows', 'size', 'columns'], rows);
  return out;
}

function restoreSource(r: Obj): string {
  const s: Obj = r.source ?? {};
  if (s.backupID) return s.backupID;
  if (s.time) return time(s.time);
  return 'latest';
}

export function restores(l: Obj): string {
  const rs = arr(l.restores);
  if (!rs.length) return 'No restores.\n';
  return table(
    ['restore', 'target', 'mode', 'phase', 'source', 'created', 'duration', 'by'],
    rs.map((r) => [
      nsName(r.namespace, r.name),
      r.target,
      r.mode,
      r.phase,
      restoreSource(r),
      time(r.created),
      humanDuration(r.durationSeconds),
      r.requestedBy,
    ]),
  );
}

export function restoreDetail(d: Obj): string {
  const r: Obj = d.restore ?? {};
  const dest: Obj = r.destination ?? {};
  const plan: Obj | undefined = r.plan ?? undefined;
  const progress: Obj | undefined = r.progress ?? undefined;
  let out = keyValues([
    ['restore', nsName(r.namespace, r.name)],
    ['target', r.target],
    ['mode', r.mode],
    ['phase', r.phase],
    ['message', r.message],
    ['source', restoreSource(r)],
    ['destination', [dest.host, dest.database].filter(Boolean).join('/') || undefined],
    ['tables', dest.tables?.length ? list(dest.tables) : undefined],
    ['sandbox', r.sandbox],
    ['sandbox ttl', dest.sandboxTTL],
    ['requested by', r.requestedBy],
    ['created', time(r.created)],
    ['duration', r.durationSeconds ? humanDuration(r.durationSeconds) : undefined],
    ['plan', plan ? planText(plan) : undefined],
    ['progress', progress ? progressText(progress) : undefined],
    ['download URL', r.downloadURL],
    ['download expires', r.downloadExpires ? time(r.downloadExpires) : undefined],
  ]);
  const checks = arr(r.checks);
  if (checks.length) {
    out += 'checks:\n';
    out += checks.map((c) => `  ${c.passed ? 'PASS' : 'FAIL'}  ${c.name}${c.message ? `: ${c.message}` : ''}\n`).join('');
  }
  return out;
}

function planText(p: Obj): string {
  const parts: string[] = [];
  if (p.baseBackupID) parts.push(`base ${p.baseBackupID}`);
  if (p.segments) parts.push(`+${p.segments} segments`);
  if (p.targetTime) parts.push(`to ${time(p.targetTime)}`);
  if (p.bytes) parts.push(humanBytes(p.bytes));
  if (p.message) parts.push(`(${p.message})`);
  return parts.join(' ') || '-';
}

function progressText(p: Obj): string {
  const bytes = p.totalBytes ? `${humanBytes(p.bytes ?? 0)} of ${humanBytes(p.totalBytes)}` : p.bytes ? humanBytes(p.bytes) : '';
  return [p.stage, bytes].filter(Boolean).join(' ') || '-';
}

export function activity(a: Obj): string {
  const bs = arr(a.backups);
  const rs = arr(a.restores);
  let out = 'Backups:\n';
  out += bs.length
    ? table(
        ['backup', 'target', 'phase', 'created', 'size', 'duration', 'reason'],
        bs.map((b) => [
          nsName(b.namespace, b.name),
          b.target,
          b.phase,
          time(b.created),
          humanBytes(b.bytes),
          humanDuration(b.durationSeconds),
          b.reason,
        ]),
      )
    : '  (none)\n';
  out += '\nRestores:\n';
  out += rs.length ? restores({ restores: rs }) : '  (none)\n';
  return out;
}

export function audit(l: Obj): string {
  const es = arr(l.events);
  if (!es.length) return 'No audit events.\n';
  return table(
    ['time', 'user', 'role', 'action', 'target', 'object', 'outcome'],
    es.map((e) => [time(e.time), e.user, e.role, e.action, e.target, e.object, e.outcome]),
  );
}

/** One line per event: `backup default/orders-x Running upload 1.2 MiB: message`. */
export function eventLine(e: StrataEvent, fallbackKind = 'event'): string {
  const parts = [e.kind || fallbackKind, nsName(e.namespace, e.name)];
  if (e.phase) parts.push(e.phase);
  if (e.stage) parts.push(e.stage);
  if (typeof e.bytes === 'number' && e.bytes > 0) parts.push(humanBytes(e.bytes));
  return parts.join(' ') + (e.message ? `: ${e.message}` : '');
}

/** The entries of an ApplyResult: a bare array, or the first array member (`results`, `items`, ...). */
export function applyItems(r: unknown): Obj[] {
  if (Array.isArray(r)) return arr(r);
  if (!r || typeof r !== 'object') return [];
  const o = r as Obj;
  for (const key of ['results', 'items', 'applied', 'resources']) {
    if (Array.isArray(o[key])) return arr(o[key]);
  }
  const first = Object.values(o).find((v) => Array.isArray(v));
  return arr(first);
}

export function applyResult(r: unknown): string {
  return applyItems(r)
    .map((i) => `${String(i.kind ?? 'resource').toLowerCase()}/${nsName(i.namespace ?? i.metadata?.namespace, i.name ?? i.metadata?.name)} ${i.action ?? 'applied'}\n`)
    .join('');
}

function listOf(r: unknown, keys: string[]): Obj[] {
  if (Array.isArray(r)) return arr(r);
  if (!r || typeof r !== 'object') return [];
  for (const key of keys) if (Array.isArray((r as Obj)[key])) return arr((r as Obj)[key]);
  return [];
}

export function resources(r: unknown): string {
  const items = listOf(r, ['resources', 'items']);
  if (!items.length) return 'No resources.\n';
  return table(
    ['kind', 'name', 'phase', 'message'],
    items.map((i) => [
      i.kind,
      nsName(i.metadata?.namespace ?? i.namespace, i.metadata?.name ?? i.name),
      i.status?.phase ?? i.phase,
      i.status?.message ?? i.message,
    ]),
  );
}

export function secrets(r: unknown): string {
  const items = listOf(r, ['secrets', 'items']);
  if (!items.length) return 'No secrets.\n';
  return table(
    ['secret', 'keys'],
    items.map((s) => [
      nsName(s.namespace ?? s.metadata?.namespace, s.name ?? s.metadata?.name),
      list(Array.isArray(s.keys) ? s.keys : s.data && typeof s.data === 'object' ? Object.keys(s.data) : undefined),
    ]),
  );
}
