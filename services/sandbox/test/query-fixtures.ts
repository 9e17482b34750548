/** Shared fixtures of the sandbox query tests: seeded values, masks, and the queries that must be refused or allowed. */

import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { browseTable, QueryRefused, runQuery } from '../src/query/index.ts';
import type { QueryResult, SandboxConnection } from '../src/query/index.ts';

export const MASKS = ['^email$', 'phone'];

export const USERS = [
  { id: 1, email: 'alice.secret@example.com', name: 'Alice', phone: '+1-555-0101', note: null },
  { id: 2, email: 'bob.hidden@example.com', name: 'Bob', phone: '+1-555-0102', note: 'NULL' },
  { id: 3, email: 'carol.private@example.com', name: 'Carol', phone: null, note: '' },
];

/** Strings that must never appear in an answer to a refused query. */
export const SECRETS = USERS.flatMap((u) => [u.email, u.phone, u.email.toUpperCase()]).filter((s): s is string => s !== null);

export const uniqueName = (prefix: string): string => `${prefix}_${randomBytes(5).toString('hex')}`;

export const sqlLiteral = (value: string | number | null): string => (value === null ? 'NULL' : typeof value === 'number' ? String(value) : `'${value.replaceAll("'", "''")}'`);

export const usersValues = (): string => USERS.map((u) => `(${[u.id, u.email, u.name, u.phone, u.note].map(sqlLiteral).join(', ')})`).join(', ');

/** Queries that could reveal a masked value other than through a directly selected column, on both engines. */
export const REFUSED_BOTH = [
  'select upper(email) from users',
  "select id from users where email like 'a%'",
  'select id from users order by email',
  'select count(*) from users group by email',
  'with x as (select email e from users) select upper(e) from x',
  'select x from v_users',
  'select leak(1)',
  'select (select email from users limit 1) as s',
  'select u.id from users u join orders o on o.note = u.email',
  "select case when email like 'a%' then 1 else 0 end from users",
  'select substr(phone, 1, 3) from users',
  "select * from users where email = 'x'",
  'select name from users union all select email from users',
  "select e from (select email as e from users) s where e like 'a%'",
  'select email as e from users order by e',
  "select id from users where name = (select email from users limit 1)",
  'select count(email) from users',
];

/** Queries that select masked columns directly: allowed, with the column masked. */
export const MASKED_DIRECT: Array<{ sql: string; column: string }> = [
  { sql: 'select * from users order by id', column: 'email' },
  { sql: 'select email as e from users order by id', column: 'e' },
  { sql: 'select e from (select id, email as e from users) s order by id', column: 'e' },
  { sql: 'with x as (select id, email e from users) select e from x order by id', column: 'e' },
];

export const ALLOWED_BOTH = ['select count(*) from users', "select id, name from users where name like 'A%'", 'select id, email from users order by id', 'select 1', 'select now()'];

/** The run fails with QueryRefused for the expected reason (by default: the masks), and its message reveals no seeded value. */
export async function expectRefusedWithoutLeak(run: Promise<unknown>, reason: RegExp = /masked column/): Promise<QueryRefused> {
  const error = await run.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(QueryRefused);
  const message = (error as Error).message;
  expect(message).toMatch(reason);
  for (const secret of SECRETS) expect(message).not.toContain(secret);
  return error as QueryRefused;
}

export function expectMaskedColumn(result: { columns: string[]; rows: string[][]; masked?: string[] }, column: string): void {
  const index = result.columns.indexOf(column);
  expect(index).toBeGreaterThanOrEqual(0);
  expect(result.masked).toContain(column);
  expect(result.rows.length).toBeGreaterThan(0);
  for (const row of result.rows) expect(row[index]).toBe('***');
  const text = JSON.stringify(result);
  for (const secret of SECRETS) expect(text).not.toContain(secret);
}

/** What differs between the engines in the behaviour both must show. */
export interface EngineCase {
  name: string;
  conn: SandboxConnection;
  /** Engine-specific queries refused on top of REFUSED_BOTH. */
  refused: string[];
  maskedDirect: Array<{ sql: string; column: string }>;
  allowed: string[];
  /** Writes with write: true that would copy a masked column elsewhere. */
  copies: string[];
  messages: { readOnly: RegExp; severalStatements: RegExp; syntax: RegExp };
  /** `users` qualified with its schema (or database). */
  qualifiedUsers: string;
}

type RunOptions = { write?: boolean; limit?: number; timeoutMs?: number };

export const runner =
  (conn: SandboxConnection) =>
  (sql: string, options: RunOptions = {}): Promise<QueryResult> =>
    runQuery(conn, { sql, masks: MASKS, ...options });

function maskTests(engine: EngineCase): void {
  const run = runner(engine.conn);
  it.each([...MASKED_DIRECT, ...engine.maskedDirect])('shows $sql masked', async ({ sql, column }) => {
    expectMaskedColumn(await run(sql), column);
  });

  it('masks every masked column of select * and lists no NULL of a masked column', async () => {
    const result = await run('select * from users order by id');
    expect(result.masked).toEqual(['email', 'phone']);
    expect(result.rows.map((r) => r[2])).toEqual(['Alice', 'Bob', 'Carol']);
    // Carol's phone is NULL but masked: Alice's note is the only NULL listed.
    expect(result.nulls).toEqual([[0, 4]]);
  });

  it.each([...REFUSED_BOTH, ...engine.refused])('refuses %s', async (sql) => {
    await expectRefusedWithoutLeak(run(sql));
  });

  it('refuses a write that copies a masked column, and leaves nothing behind', async () => {
    for (const sql of engine.copies) await expectRefusedWithoutLeak(run(sql, { write: true }));
    expect((await run('select count(*) from notes')).rows).toEqual([['0']]);
  });

  it.each([...ALLOWED_BOTH, ...engine.allowed])('allows %s', async (sql) => {
    expect((await run(sql)).rows.length).toBeGreaterThan(0);
  });

  it('neither masks nor refuses when no table has a masked column', async () => {
    const result = await runQuery(engine.conn, { sql: 'select upper(name) as u from users order by id', masks: ['^nothing_like_this$'] });
    expect(result.rows).toEqual([['ALICE'], ['BOB'], ['CAROL']]);
    expect(result.masked).toBeUndefined();
  });

  it('refuses an invalid mask', async () => {
    await expect(runQuery(engine.conn, { sql: 'select 1', masks: ['('] })).rejects.toBeInstanceOf(QueryRefused);
  });
}

function statementTests(engine: EngineCase): void {
  const run = runner(engine.conn);
  it('refuses a write without write: true with the database message', async () => {
    await expectRefusedWithoutLeak(run("insert into notes values ('x')"), engine.messages.readOnly);
  });

  it('commits a write with write: true', async () => {
    const result = await run("insert into notes values ('one'), ('two')", { write: true });
    expect(result).toMatchObject({ command: 'INSERT', affected: 2, columns: [], rows: [] });
    expect((await run("select body from notes where body in ('one', 'two') order by body")).rows).toEqual([['one'], ['two']]);
    await run("delete from notes where body in ('one', 'two')", { write: true });
  });

  it('truncates at the limit', async () => {
    const deep = 'with recursive r (i) as (select 1 union all select i + 1 from r where i < 5000) select i from r';
    const result = await run(deep, { limit: 10 });
    expect(result.rows).toHaveLength(10);
    expect(result.truncated).toBe(true);
    expect(result.rows[9]).toEqual(['10']);
    const byDefault = await run(deep);
    expect(byDefault.rows).toHaveLength(100);
    expect(byDefault.truncated).toBe(true);
    expect(await run('select id from many where id <= 10 order by id', { limit: 10 })).toMatchObject({ truncated: false, command: 'SELECT', affected: 10 });
  });

  it('tells NULL from the text NULL and from the empty string', async () => {
    const result = await run('select id, note from users order by id');
    expect(result.rows).toEqual([['1', ''], ['2', 'NULL'], ['3', '']]);
    expect(result.nulls).toEqual([[0, 1]]);
  });

  it('refuses several statements in one request', async () => {
    await expectRefusedWithoutLeak(run('select 1; select 2'), engine.messages.severalStatements);
    const sneaky = runQuery(engine.conn, { sql: "select 1; insert into notes values ('sneaky')", masks: [], write: true });
    await expectRefusedWithoutLeak(sneaky, engine.messages.severalStatements);
    expect((await run("select count(*) from notes where body = 'sneaky'")).rows).toEqual([['0']]);
  });

  it('refuses bad bounds and SQL errors with QueryRefused, and a connection failure with a plain Error', async () => {
    await expect(run('   ')).rejects.toBeInstanceOf(QueryRefused);
    await expect(run('select 1', { limit: 0 })).rejects.toBeInstanceOf(QueryRefused);
    await expect(run('select 1', { limit: 1001 })).rejects.toBeInstanceOf(QueryRefused);
    await expect(run('selec 1')).rejects.toThrow(engine.messages.syntax);
    const failure = await runQuery({ ...engine.conn, database: `${engine.conn.database}_missing` }, { sql: 'select 1', masks: [] }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(Error);
    expect(failure).not.toBeInstanceOf(QueryRefused);
  });
}

function browseTests(engine: EngineCase): void {
  it('browses a table masked, 50 rows at most', async () => {
    const many = await browseTable(engine.conn, 'many', MASKS);
    expect(many.rows).toHaveLength(50);
    expect(many.truncated).toBe(true);
    expect(many.masked).toEqual(['email']);
    const users = await browseTable(engine.conn, engine.qualifiedUsers, MASKS);
    expect(users.rows).toHaveLength(3);
    expect(users.truncated).toBe(false);
    expect(users.masked).toEqual(['email', 'phone']);
  });

  it('refuses a table it does not list', async () => {
    await expect(browseTable(engine.conn, 'v_users', MASKS)).rejects.toThrow(/no table/);
    await expect(browseTable(engine.conn, 'nope', MASKS)).rejects.toBeInstanceOf(QueryRefused);
  });
}

/** The behaviour both engines must show, on a database seeded with the same users, orders, notes, many, v_users and leak(). */
export function describeSharedBehaviour(engine: EngineCase): void {
  describe(`masked columns (${engine.name})`, () => maskTests(engine));
  describe(`statements (${engine.name})`, () => statementTests(engine));
  describe(`browsing (${engine.name})`, () => browseTests(engine));
}
