import mysql from 'mysql2/promise';
import { startMariadb } from '@sigil/local-stack';
import { retentionScenario, type BackupRow, type RetentionServer, type RetentionWriter } from './retention-scenario.ts';

/**
 * Retention and garbage collection on MariaDB (issue 25): the scenario of retention-scenario.ts on a server of its
 * own (binlog on, ROW, as the local stack runs it) streaming binlogs, with logical fulls that record their binlog
 * position.
 *
 * What differs from Postgres, as the catalog states it (change-capture/segments.ts `physicalFulls`, chain.ts):
 * - A dump's snapshot lies before its completion, and it restores nothing exactly until the binlog after its
 *   position passes that completion (`needsChangeLog`). Its window starts at the row's `completedAt`, not at the
 *   manifest's `consistentAt` (the dump's start), and opens only once the stream is past it. Retention still counts
 *   the full on `consistentAt` (retention-pass.ts `backupTime`).
 * - A full's position is the manifest's `binlogFile:binlogPos`, ordered as file number · 2³² + offset; a binlog
 *   segment starts at offset 0 of its file (`<file>:0`).
 * - Binlogs keep whole seconds (`wholeSeconds`): a restore to a time replays to the end of that second. The writer
 *   leaves every other second quiet, and a restore aims inside a quiet second.
 */

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `<name>.<n>` at `offset` as the catalog orders it (segments.ts `parseLsn`). */
function binlogPosition(file: string, offset: number): bigint {
  const index = /\.(\d+)$/.exec(file)?.[1];
  if (index === undefined) throw new Error(`not a binlog file name: ${file}`);
  return (BigInt(index) << 32n) + BigInt(offset);
}

/** Three rows early in each odd second; every even second is quiet. */
function startWriter(port: number): RetentionWriter {
  const written: Array<{ id: number; startedAt: number; committedAt: number }> = [];
  let writing = true;
  const loop = (async () => {
    const c = await mysql.createConnection({ host: '127.0.0.1', port, user: 'root', database: 'shop' });
    while (writing) {
      await sleep(1000 - (Date.now() % 1000) + 150);
      if (Math.floor(Date.now() / 1000) % 2 === 0) continue;
      for (let i = 0; i < 3 && writing; i++) {
        const startedAt = Date.now();
        const [result] = await c.query<mysql.ResultSetHeader>('INSERT INTO events (note) VALUES (?)', [`row ${startedAt}.${i}`]);
        written.push({ id: result.insertId, startedAt, committedAt: Date.now() });
      }
    }
    await c.end();
  })();
  /** No insert ran at any time of second `s`: a replay to its end holds exactly the rows committed before it. */
  const quiet = (s: number) => !written.some((w) => w.startedAt < (s + 1) * 1000 && w.committedAt >= s * 1000);
  return {
    async stop() {
      writing = false;
      await loop;
    },
    // The first quiet second at least a second after `from`, ending before `before`, and followed by a commit.
    momentBetween(from, before) {
      for (let s = Math.ceil(from / 1000) + 1; (s + 1) * 1000 <= before; s++) {
        if (!quiet(s) || !written.some((w) => w.startedAt >= (s + 1) * 1000)) continue;
        return { at: new Date(s * 1000 + 500).toISOString(), expected: written.filter((w) => w.committedAt < s * 1000).map((w) => w.id) };
      }
      return undefined;
    },
  };
}

async function start(stateDir: string): Promise<RetentionServer> {
  const server = await startMariadb({ stateDir, env: process.env, log: () => {} });
  const admin = await mysql.createConnection({ host: '127.0.0.1', port: server.port, user: 'root' });
  await admin.query('CREATE DATABASE shop');
  await admin.query('CREATE TABLE shop.events (id INT AUTO_INCREMENT PRIMARY KEY, note TEXT NOT NULL) ENGINE=InnoDB');
  return {
    stackFields: { mysql: { host: '127.0.0.1', port: server.port, username: 'root' }, databases: { mysql: ['shop'] } },
    restoreInto: { host: '127.0.0.1', port: server.port, credentialsSecret: 'mysql-credentials' },
    startWriter: () => startWriter(server.port),
    async rotateChangeLog() {
      await admin.query('FLUSH BINARY LOGS');
      const [[status]] = await admin.query<mysql.RowDataPacket[]>('SHOW MASTER STATUS');
      return binlogPosition(status!.File as string, status!.Position as number);
    },
    async idsIn(database) {
      const [rows] = await admin.query<mysql.RowDataPacket[]>(`SELECT id FROM \`${database}\`.events ORDER BY id`);
      return rows.map((r) => r.id as number);
    },
    dropDatabase: async (database) => void (await admin.query(`DROP DATABASE IF EXISTS \`${database}\``)),
    async stop() {
      await admin.end().catch(() => undefined);
      await server.stop();
    },
  };
}

retentionScenario({
  name: 'mariadb',
  target: 'default/mysql-main',
  catalogName: 'retention_mariadb',
  start,
  fullFacts(row: BackupRow) {
    const manifest = row.manifest as { consistentAt: string; position: { binlogFile: string; binlogPos: number } };
    return { consistentAt: Date.parse(manifest.consistentAt), windowStart: row.completedAt!.getTime(), position: binlogPosition(manifest.position.binlogFile, manifest.position.binlogPos) };
  },
  fileStart: (position) => (position >> 32n) << 32n,
  fileStartOfName: (name) => binlogPosition(name, 0),
  restoreMessage: /binlogs replayed from .*:\d+ to the end of the second of/,
});
