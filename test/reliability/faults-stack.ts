import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startNats, startPostgres, startStack, type NatsHandle, type PostgresHandle, type Stack } from '@sigil/local-stack';

/**
 * The platform on servers of its own: the faults suite restarts Postgres and NATS, which would break every other test
 * of the run if it used the run's shared servers. Postgres and NATS are started here (so they can be stopped and
 * started again on the same port and data), handed to the stack through POSTGRES_URL and NATS_URL; MariaDB, S3 and
 * the SMTP sink are the stack's own under the same state folder.
 */
export interface FaultStack {
  stack: Stack;
  stateDir: string;
  postgres(): PostgresHandle;
  nats(): NatsHandle;
  /** Stops Postgres (fast shutdown) and starts it again on its port and data; answers the downtime in ms. */
  restartPostgres(): Promise<number>;
  /** Stops NATS and starts it again on its port and JetStream store; answers the downtime in ms. */
  restartNats(): Promise<number>;
  /** SQL as the superuser against one database of the server. */
  sql<R extends pg.QueryResultRow = pg.QueryResultRow>(database: string, text: string, params?: unknown[]): Promise<R[]>;
  /** Stops everything; the state folder (logs) stays when asked. */
  stop(options?: { keepState?: boolean }): Promise<void>;
}

/** The variables that name the test run's shared servers: none of them reaches the private stack. */
const SHARED_SERVER_VARIABLES = /^(POSTGRES_URL|MYSQL_URL|NATS_URL|S3_[A-Z_]+|SMTP_URL|SMTP_INBOX_URL)$/;

export async function startFaultStack(log: (line: string) => void): Promise<FaultStack> {
  const stateDir = await mkdtemp(path.join(tmpdir(), 'sigil-faults-'));
  const serverOptions = { stateDir, env: process.env, log };
  let postgres = await startPostgres({ ...serverOptions, durable: false });
  let nats = await startNats(serverOptions);
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !SHARED_SERVER_VARIABLES.test(name)));
  let stack: Stack;
  try {
    stack = await startStack({
      stateDir,
      env: { ...env, POSTGRES_URL: postgres.adminUrl, NATS_URL: nats.url, STACK_ANCHOR_INTERVAL_MS: '1000', STACK_METER_REPORT_INTERVAL_MS: '2000' },
      // The stack's supervisor says what it restarts; each e-mail the sink takes is noise here.
      log: (line) => (line.startsWith('smtp: mail ') ? undefined : log(line)),
      logLevel: 'warn',
    });
  } catch (error) {
    await Promise.allSettled([postgres.stop(), nats.stop()]);
    throw error;
  }
  const restart = async <H extends { port: number; stop(): Promise<void> }>(what: string, handle: H, start: () => Promise<H>): Promise<{ handle: H; ms: number }> => {
    const began = Date.now();
    await handle.stop();
    const again = await start();
    // The services keep the address they were given: a server back on another port would be a different test.
    if (again.port !== handle.port) throw new Error(`${what} came back on port ${again.port}, not ${handle.port}`);
    return { handle: again, ms: Date.now() - began };
  };
  return {
    stack,
    stateDir,
    postgres: () => postgres,
    nats: () => nats,
    async restartPostgres() {
      const { handle, ms } = await restart('postgres', postgres, () => startPostgres({ ...serverOptions, durable: false }));
      postgres = handle;
      return ms;
    },
    async restartNats() {
      const { handle, ms } = await restart('nats', nats, () => startNats(serverOptions));
      nats = handle;
      return ms;
    },
    async sql(database, text, params = []) {
      const url = new URL(postgres.adminUrl);
      url.pathname = `/${database}`;
      const client = new pg.Client({ connectionString: url.toString() });
      await client.connect();
      try {
        return (await client.query(text, params)).rows;
      } finally {
        await client.end();
      }
    },
    async stop(options = {}) {
      await stack.stop();
      await Promise.allSettled([postgres.stop(), nats.stop()]);
      if (!options.keepState) await rm(stateDir, { recursive: true, force: true }).catch(() => undefined);
    },
  };
}

/**
 * The folder the mover process `pid` keeps its work files in (services/mover/src/temp-dir.ts): `strata-mover-<pid>`
 * under its MOVER_TEMP_DIR, else its system temp folder; read from the process's own environment.
 */
export function moverWorkFolder(pid: number): string {
  const env = Object.fromEntries(
    readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean).map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
  return path.join(env.MOVER_TEMP_DIR || env.TMPDIR || '/tmp', `strata-mover-${pid}`);
}
