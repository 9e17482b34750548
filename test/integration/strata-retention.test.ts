import pg from 'pg';
import { startPostgres } from '@sigil/local-stack';
import { retentionScenario, type BackupRow, type RetentionServer, type RetentionWriter } from './retention-scenario.ts';

/**
 * Retention and garbage collection on Postgres (issue 25): the scenario of retention-scenario.ts on a server of its
 * own streaming WAL, with physical fulls. A physical base is consistent at its end, so its window starts at the
 * manifest's `consistentAt`, and a restore to any moment between two commits is exact.
 */

/** The default WAL segment size of the servers the local stack starts. */
const WAL_SEGMENT_BYTES = 16n * 1024n * 1024n;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `X/Y` as the catalog orders it. */
function lsn(position: string): bigint {
  const [high = '0', low = '0'] = position.split('/');
  return (BigInt(`0x${high}`) << 32n) | BigInt(`0x${low}`);
}

async function connect(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => {});
  await client.connect();
  return client;
}

/** A row every 50 ms, a WAL switch every 25 rows: finished segments and partial ones. */
function startWriter(url: string): RetentionWriter {
  const written: Array<{ id: number; startedAt: number; committedAt: number }> = [];
  let writing = true;
  const loop = (async () => {
    const client = await connect(url);
    for (let n = 0; writing; n++) {
      const startedAt = Date.now();
      const { rows } = await client.query<{ id: number }>('INSERT INTO events (note) VALUES ($1) RETURNING id', [`row ${n}`]);
      written.push({ id: rows[0]!.id, startedAt, committedAt: Date.now() });
      if ((n + 1) % 25 === 0) await client.query('SELECT pg_switch_wal()');
      await sleep(50);
    }
    await client.end();
  })();
  return {
    async stop() {
      writing = false;
      await loop;
    },
    // Between two commits a little after `from`: every row before it is in, none after it.
    momentBetween(from, before) {
      const index = written.findIndex((w, i) => w.committedAt > from + 1500 && written[i + 1] !== undefined);
      const next = written[index + 1];
      if (index < 0 || !next || next.startedAt >= before) return undefined;
      return { at: new Date(Math.floor((written[index]!.committedAt + next.startedAt) / 2)).toISOString(), expected: written.slice(0, index + 1).map((w) => w.id) };
    },
  };
}

async function start(stateDir: string): Promise<RetentionServer> {
  const server = await startPostgres({ stateDir, env: process.env, durable: false, log: () => {} });
  const urlOf = (database: string) => server.adminUrl.replace(/\/postgres$/, `/${database}`);
  const admin = await connect(server.adminUrl);
  await admin.query('CREATE DATABASE shop');
  const shop = await connect(urlOf('shop'));
  await shop.query('CREATE TABLE events (id serial PRIMARY KEY, note text NOT NULL)');
  await shop.end();
  return {
    stackFields: { postgres: { host: '127.0.0.1', port: server.port, username: 'postgres' }, databases: { postgres: ['shop'] } },
    restoreInto: { host: '127.0.0.1', port: server.port, credentialsSecret: 'postgres-credentials' },
    startWriter: () => startWriter(urlOf('shop')),
    // The end of the switch record, in the file just finished.
    rotateChangeLog: async () => lsn((await admin.query<{ at: string }>('SELECT pg_switch_wal()::text AS at')).rows[0]!.at),
    async idsIn(database) {
      const client = await connect(urlOf(database));
      try {
        return (await client.query<{ id: number }>('SELECT id FROM events ORDER BY id')).rows.map((r) => r.id);
      } finally {
        await client.end();
      }
    },
    dropDatabase: async (database) => void (await admin.query(`DROP DATABASE IF EXISTS "${database}"`)),
    async stop() {
      await admin.end().catch(() => undefined);
      await server.stop();
    },
  };
}

retentionScenario({
  name: 'postgres',
  target: 'default/postgres-main',
  catalogName: 'retention',
  start,
  fullFacts(row: BackupRow) {
    const manifest = row.manifest as { consistentAt: string; position: { endLSN: string } };
    const consistentAt = Date.parse(manifest.consistentAt);
    return { consistentAt, windowStart: consistentAt, position: lsn(manifest.position.endLSN) };
  },
  fileStart: (position) => position - (position % WAL_SEGMENT_BYTES),
  // `<timeline><log><segment>`, eight hex digits each.
  fileStartOfName: (name) => (BigInt(`0x${name.slice(8, 16)}`) << 32n) + BigInt(`0x${name.slice(16, 24)}`) * WAL_SEGMENT_BYTES,
});
