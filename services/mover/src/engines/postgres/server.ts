/** PostgreSQL: What a server is: version and settings, its databases, its current position (LSN and timeline). */

import type { DatabaseAccess } from '@sigil/proto/strata-jobs';
import { resolveWanted } from '../inventory.ts';
import type { Position, ServerInfo } from '../types.ts';
import { PROVIDER_DATABASES, num, where, withClient } from './shared.ts';

export const SETTINGS = [
  'server_encoding',
  'lc_collate',
  'lc_ctype',
  'TimeZone',
  'wal_level',
  'archive_mode',
  'max_connections',
  'max_wal_senders',
  'max_replication_slots',
  'shared_buffers',
  'data_checksums',
  'block_size',
  'wal_segment_size',
  'server_version_num',
];

export async function serverInfo(access: DatabaseAccess): Promise<ServerInfo> {
  return await withClient(access, undefined, async (client) => {
    const { rows } = await client.query<{ version: string; num: string; size: string | null; recovery: boolean }>(
      `SELECT current_setting('server_version') AS version, current_setting('server_version_num') AS num, pg_is_in_recovery() AS recovery,
              (SELECT sum(pg_database_size(d.oid)) FROM pg_database d
                WHERE d.datallowconn AND (has_database_privilege(d.oid, 'CONNECT') OR pg_has_role('pg_read_all_stats', 'MEMBER'))) AS size`,
    );
    const row = rows[0];
    const settings: Record<string, string> = {};
    const found = await client.query<{ name: string; value: string }>(
      `SELECT name, current_setting(name) AS value FROM pg_settings WHERE name = ANY($1::text[])`,
      [SETTINGS],
    );
    for (const s of found.rows) settings[s.name] = s.value;
    settings.in_recovery = String(row?.recovery ?? false);
    let systemID = '';
    try {
      const id = await client.query<{ id: string }>(`SELECT system_identifier::text AS id FROM pg_control_system()`);
      systemID = id.rows[0]?.id ?? '';
    } catch {
      // pg_control_system() not granted to this user
    }
    return {
      version: row?.version ?? '',
      host: where(access),
      systemID,
      major: Math.floor(num(row?.num) / 10000),
      settings,
      sizeBytes: num(row?.size),
    };
  });
}

export async function listDatabases(access: DatabaseAccess, wanted: string[]): Promise<string[]> {
  return await withClient(access, undefined, async (client) => {
    const { rows } = await client.query<{ name: string; listed: boolean }>(
      `SELECT datname AS name, (NOT datistemplate AND datallowconn AND datconnlimit <> -2) AS listed FROM pg_database ORDER BY datname`,
    );
    const all = rows.filter((r) => r.listed && !PROVIDER_DATABASES.has(r.name)).map((r) => r.name);
    const names = new Set(rows.map((r) => r.name));
    return resolveWanted(wanted, all, (name) => (names.has(name) ? name : undefined), `postgres ${where(access)}`);
  });
}

export async function position(access: DatabaseAccess): Promise<Position> {
  return await withClient(access, undefined, async (client) => {
    const recovery = (await client.query<{ r: boolean }>('SELECT pg_is_in_recovery() AS r')).rows[0]?.r ?? false;
    if (!recovery) {
      const { rows } = await client.query<{ lsn: string; wal: string }>(
        `SELECT pg_current_wal_lsn()::text AS lsn, pg_walfile_name(pg_current_wal_lsn()) AS wal`,
      );
      const wal = rows[0]?.wal ?? '';
      return { startLSN: rows[0]?.lsn ?? '', startWAL: wal, timeline: Number.parseInt(wal.slice(0, 8), 16) || 1 };
    }
    // A standby: where replay is, on the timeline of its last checkpoint.
    const { rows } = await client.query<{ lsn: string | null; tli: number | null }>(
      `SELECT pg_last_wal_replay_lsn()::text AS lsn, (SELECT timeline_id FROM pg_control_checkpoint()) AS tli`,
    );
    const result: Position = { startLSN: rows[0]?.lsn ?? '' };
    if (rows[0]?.tli) result.timeline = Number(rows[0].tli);
    return result;
  });
}
