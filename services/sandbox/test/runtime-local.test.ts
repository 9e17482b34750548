import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import mysql from 'mysql2/promise';
import { afterAll, describe, expect, it } from 'vitest';
import { createLocalRuntime } from '../src/runtime/local.ts';
import type { RuntimeState, ServerSpec } from '../src/runtime/types.ts';

const baseDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sbx-runtime-'));
const runtime = createLocalRuntime({ baseDir });
const started: RuntimeState[] = [];

afterAll(async () => {
  for (const state of started) await runtime.wipe(state);
  fs.rmSync(baseDir, { recursive: true, force: true });
});

function postgresMajor(): number {
  return Math.max(...fs.readdirSync('/usr/lib/postgresql').map(Number).filter(Boolean));
}

describe('local runtime', () => {
  it('runs a postgres of the asked major with the admin it was given, adopts it again, and wipes it', async () => {
    const spec: ServerSpec = { id: 'sbx-pg-1', engine: 'postgres', major: postgresMajor(), username: 'sandbox_admin', password: 'pw-Ä-1' };
    const state = await runtime.start(spec);
    started.push(state);
    expect(state.host).toBe('127.0.0.1');
    const client = new pg.Client({ host: state.host, port: state.port, user: spec.username, password: spec.password, database: 'postgres' });
    await client.connect();
    const { rows } = await client.query<{ v: string }>("SELECT current_setting('server_version_num') AS v");
    await client.end();
    expect(Math.floor(Number(rows[0]?.v) / 10000)).toBe(spec.major);
    const wrong = new pg.Client({ host: state.host, port: state.port, user: spec.username, password: 'nope', database: 'postgres' });
    await expect(wrong.connect()).rejects.toThrow(/password authentication failed/);
    // The same state again: the running server is adopted, not started twice.
    expect(await runtime.start(spec, state)).toEqual(state);
    expect(await runtime.usedBytes(state)).toBeGreaterThan(1_000_000);
    await runtime.stop(state);
    expect(await runtime.alive(state)).toBe(false);
    // Started again on its data.
    const again = await runtime.start(spec, state);
    started.push(again);
    expect(await runtime.alive(again)).toBe(true);
    await runtime.wipe(again);
    expect(fs.existsSync(again.dir)).toBe(false);
  });

  it('runs a mariadbd with the admin it was given', async () => {
    const spec: ServerSpec = { id: 'sbx-my-1', engine: 'mysql', major: 10, username: 'sandbox_admin', password: "it's-secret" };
    const state = await runtime.start(spec);
    started.push(state);
    const connection = await mysql.createConnection({ host: state.host, port: state.port, user: spec.username, password: spec.password });
    await connection.query('CREATE DATABASE shop');
    const [rows] = await connection.query('SHOW DATABASES');
    await connection.end();
    expect((rows as Array<{ Database: string }>).map((r) => r.Database)).toContain('shop');
    await runtime.wipe(state);
    expect(await runtime.alive(state)).toBe(false);
  });
});
