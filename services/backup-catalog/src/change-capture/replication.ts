import pg from 'pg';
import mysql from 'mysql2/promise';
import { logicalSlotName } from '@sigil/proto/strata-jobs';
import type { BackupTargetSpec as TargetSpec } from '@sigil/proto/resources';
import { DEFAULT_ENGINE_PORTS } from '@sigil/proto/strata';
import type { Db, Tx } from '../db.ts';
import type { DatabaseProbe } from '../resources/probes.ts';
import type { StoredResource } from '../resources/resources.ts';
import type { SecretStore } from '../resources/secrets.ts';
import { databaseCredentials } from '../resources/stores.ts';

/** The replication slot of a target: one per target, named after its uid so a renamed target keeps its WAL. */
export function slotName(uid: string): string {
  return `strata_${uid.toLowerCase().replace(/[^a-z0-9]/g, '_')}`.slice(0, 63);
}

/** Whether a target's user may replicate: null when it may, else what is missing and the exact grants or settings. */
export type ReplicationRights = null | { denied: string; fix: string };

const quoteIdent = (name: string) => `"${name.replace(/"/g, '""')}"`;
const quoteMysql = (value: string) => `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

/**
 * Postgres: the REPLICATION attribute (or superuser), `wal_level` at least `replica`, a free replication slot, and a
 * `pg_hba.conf` line that lets the user open a replication connection from here (tried: IDENTIFY_SYSTEM).
 */
async function postgresRights(probe: DatabaseProbe, timeoutMs: number): Promise<ReplicationRights> {
  const options = { host: probe.host, port: probe.port, user: probe.username, password: probe.password, connectionTimeoutMillis: timeoutMs, application_name: 'strata-catalog' };
  const client = new pg.Client({ ...options, database: probe.databases.find((d) => d !== '*') ?? 'postgres' });
  client.on('error', () => {});
  const missing: string[] = [];
  const fixes: string[] = [];
  let mayReplicate: boolean;
  try {
    await client.connect();
    const { rows } = await client.query<{ rolreplication: boolean; rolsuper: boolean; wal_level: string; max_slots: number; used_slots: number }>(
      `SELECT r.rolreplication, r.rolsuper, current_setting('wal_level') AS wal_level,
              current_setting('max_replication_slots')::int AS max_slots, (SELECT count(*) FROM pg_replication_slots)::int AS used_slots
       FROM pg_roles r WHERE r.rolname = current_user`,
    );
    const facts = rows[0];
    if (!facts) return { denied: 'the role could not be read', fix: '' };
    mayReplicate = facts.rolreplication || facts.rolsuper;
    if (!mayReplicate) {
      missing.push(`role ${probe.username} has no REPLICATION attribute`);
      fixes.push(`ALTER ROLE ${quoteIdent(probe.username)} REPLICATION;`);
    }
    if (facts.wal_level !== 'replica' && facts.wal_level !== 'logical') {
      missing.push(`wal_level is ${facts.wal_level}`);
      fixes.push("ALTER SYSTEM SET wal_level = 'replica'; -- then restart the server");
    }
    if (facts.used_slots >= facts.max_slots) {
      missing.push(`all ${facts.max_slots} replication slots are in use`);
      fixes.push(`ALTER SYSTEM SET max_replication_slots = ${facts.max_slots + 2}; -- then restart the server`);
    }
  } finally {
    await client.end().catch(() => {});
  }
  if (mayReplicate) {
    // A physical replication connection (walsender): only pg_hba.conf can still refuse it.
    const walsender = new pg.Client({ ...options, database: 'postgres', replication: 'true' } as pg.ClientConfig);
    walsender.on('error', () => {});
    try {
      await walsender.connect();
      await walsender.query('IDENTIFY_SYSTEM');
    } catch (error) {
      const code = (error as { code?: string }).code ?? '';
      missing.push(code.startsWith('28') ? `pg_hba.conf does not let ${probe.username} open a replication connection from this host` : `a replication connection failed: ${(error as Error).message}`);
      fixes.push(`add to pg_hba.conf: host replication ${probe.username} <this host's address>/32 scram-sha-256 -- then SELECT pg_reload_conf();`);
    } finally {
      await walsender.end().catch(() => {});
    }
  }
  return missing.length ? { denied: missing.join('; '), fix: fixes.join(' ') } : null;
}

/** MariaDB/MySQL: REPLICATION SLAVE and REPLICATION CLIENT (BINLOG MONITOR), the binary log on in ROW format, a server id. */
async function mysqlRights(probe: DatabaseProbe, timeoutMs: number): Promise<ReplicationRights> {
  const connection = await mysql.createConnection({ host: probe.host, port: probe.port, user: probe.username, password: probe.password, connectTimeout: timeoutMs });
  connection.on('error', () => {});
  try {
    const [grantRows] = await connection.query<mysql.RowDataPacket[]>('SHOW GRANTS');
    const grants = grantRows.map((row) => String(Object.values(row)[0])).join('\n').toUpperCase();
    const all = /GRANT ALL PRIVILEGES ON \*\.\* /.test(grants);
    const slave = all || /REPLICATION (SLAVE|REPLICA)\b/.test(grants);
    const client = all || /REPLICATION CLIENT|BINLOG MONITOR|\bSUPER\b/.test(grants);
    const [[facts]] = await connection.query<mysql.RowDataPacket[]>('SELECT CURRENT_USER() AS who, @@log_bin AS log_bin, @@binlog_format AS format, @@server_id AS server_id');
    const [user = probe.username, host = '%'] = String(facts?.who ?? '').split('@');
    const missing: string[] = [];
    const fixes: string[] = [];
    const privileges = [...(slave ? [] : ['REPLICATION SLAVE']), ...(client ? [] : ['REPLICATION CLIENT'])];
    if (privileges.length) {
      missing.push(`${user} lacks ${privileges.join(' and ')}`);
      fixes.push(`GRANT ${privileges.join(', ')} ON *.* TO ${quoteMysql(user)}@${quoteMysql(host)};`);
    }
    if (Number(facts?.log_bin) !== 1) {
      missing.push('the binary log is off');
      fixes.push('set log_bin=ON in the server configuration -- then restart the server');
    }
    if (String(facts?.format ?? '').toUpperCase() !== 'ROW') {
      missing.push(`binlog_format is ${facts?.format}`);
      fixes.push("SET PERSIST binlog_format = 'ROW'; -- MariaDB: binlog_format=ROW in the configuration");
    }
    if (Number(facts?.server_id) === 0) {
      missing.push('server_id is 0');
      fixes.push('set server_id to a unique non-zero number in the server configuration');
    }
    return missing.length ? { denied: missing.join('; '), fix: fixes.join(' ') } : null;
  } finally {
    await connection.end().catch(() => {});
  }
}

/** Checked with every target check, once the target answers; a failure to check is reported as denied with the reason. */
export async function replicationRights(probe: DatabaseProbe, timeoutMs: number): Promise<ReplicationRights> {
  try {
    return probe.engine === 'postgres' ? await postgresRights(probe, timeoutMs) : await mysqlRights(probe, timeoutMs);
  } catch (error) {
    return { denied: `the replication rights could not be checked: ${(error as Error).message}`, fix: '' };
  }
}

/**
 * Drops a target's slots that no streamer uses, so the server stops keeping WAL for them: the physical slot and the
 * logical slots of its previews (`all`, a deleted target), or only the latter (`previews`, previews no longer made),
 * with the publication each of those databases has for them. Absent is fine; answers the slots dropped.
 */
export async function releaseSlot(probe: DatabaseProbe, slot: string, timeoutMs: number, which: 'all' | 'previews' = 'all'): Promise<string[]> {
  const connect = async (database: string) => {
    const client = new pg.Client({ host: probe.host, port: probe.port, user: probe.username, password: probe.password, database, connectionTimeoutMillis: timeoutMs, application_name: 'strata-catalog' });
    client.on('error', () => {});
    await client.connect();
    return client;
  };
  const client = await connect('postgres');
  try {
    const { rows } = await client.query<{ slot_name: string; datoid: string | null; database: string | null }>(
      `SELECT slot_name, datoid::text AS datoid, database FROM pg_replication_slots WHERE NOT active`,
    );
    const ours = rows.filter((r) => (r.datoid ? r.slot_name === logicalSlotName(slot, Number(r.datoid)) : which === 'all' && r.slot_name === slot));
    for (const row of ours) await client.query('SELECT pg_drop_replication_slot($1)', [row.slot_name]);
    for (const database of new Set(ours.flatMap((r) => (r.database ? [r.database] : [])))) {
      const other = await connect(database).catch(() => undefined);
      await other?.query(`DROP PUBLICATION IF EXISTS ${quoteIdent(slot)}`).catch(() => undefined);
      await other?.end().catch(() => undefined);
    }
    return ours.map((r) => r.slot_name);
  } finally {
    await client.end().catch(() => {});
  }
}

/** `releaseSlot` for a Postgres target, with its credentials (other engines keep no slot). */
export async function releaseTargetSlots(db: Tx | Db, secrets: SecretStore, target: StoredResource<TargetSpec>, which: 'all' | 'previews'): Promise<string[]> {
  if (target.spec.engine !== 'postgres') return [];
  const credentials = await databaseCredentials(db, secrets, target);
  const probe = { engine: 'postgres' as const, host: target.spec.endpoint.host, port: target.spec.endpoint.port ?? DEFAULT_ENGINE_PORTS.postgres, ...credentials, databases: ['*'] };
  return await releaseSlot(probe, slotName(target.metadata.uid), 10_000, which);
}
