import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseLsn, parseWaldump } from '../src/engines/postgres/wal.ts';
import type { RelationInfo, RelationResolver } from '../src/engines/postgres/relation-names.ts';
import { summarizeWalChanges, summaryOrReason } from '../src/engines/postgres/wal-summary.ts';

/**
 * pg_waldump (PostgreSQL 15, TZ=UTC; Btree, XLOG, Standby and FPI records left out) of this script on database
 * `shop` (OID 16407): CREATE TABLE orders (id serial PRIMARY KEY, note text) [its file 16409, its OID];
 * INSERT … SELECT of 12 rows; UPDATE of 5; DELETE of 2; ALTER TABLE orders ADD COLUMN tier text; TRUNCATE orders
 * [new file 16417, TOAST 16418]; INSERT of one row of 9,600 bytes (5 TOAST chunks); BEGIN; INSERT; ROLLBACK;
 * BEGIN; INSERT; SAVEPOINT x; INSERT; RELEASE x; COMMIT; ALTER TABLE orders ADD COLUMN r float DEFAULT random()
 * [a rewrite: new file 16423, the 3 rows copied into it, TOAST 16426].
 */
const WORKLOAD = readFileSync(new URL('./data/waldump-changes.txt', import.meta.url), 'utf8');
const START = parseLsn('0/3000000');
const SEGMENT = 16 * 1024 * 1024;

const orders: RelationInfo = { name: 'shop.public.orders', kind: 'table' };
const toast: RelationInfo = { name: 'shop.pg_toast.pg_toast_16409', kind: 'toast' };

/** What the server's catalog names, as a fake: every file of the script's life, or those a late look still finds. */
function resolver(files: Record<string, RelationInfo>): RelationResolver {
  return { resolve: async (asked) => new Map(asked.flatMap((file) => (files[file] ? [[file, files[file]] as const] : []))) };
}

describe('the changes of a WAL segment', () => {
  it('counts the committed rows of each table, a TRUNCATE, and the schema changes, and no TOAST chunk, aborted or copied row', async () => {
    const { changes, commits } = parseWaldump(WORKLOAD, START, SEGMENT);
    expect(commits).toBe(9); // the rolled back transaction is not one
    const summary = await summarizeWalChanges(changes, resolver({ '16407/16409': orders, '16407/16417': orders, '16407/16423': orders, '16407/16418': toast, '16407/16426': toast }));
    expect(summary).toEqual({
      tables: { 'shop.public.orders': { inserts: 15, updates: 5, deletes: 2, truncates: 1 } },
      ddl: [],
      schemaChanges: 3,
      explanation: 'schema changed in 3 transactions; 15 inserts into shop.orders; 5 updates to shop.orders; 2 deletes from shop.orders; 1 truncate of shop.orders',
    });
  });

  it('counts only the target\'s databases when it names them: their rows and their schema changes', async () => {
    const { changes } = parseWaldump(WORKLOAD, START, SEGMENT);
    const files = resolver({ '16407/16409': orders, '16407/16417': orders, '16407/16423': orders, '16407/16418': toast, '16407/16426': toast });
    const ours = await summarizeWalChanges(changes, files, new Set(['16407']));
    expect(ours).toMatchObject({ tables: { 'shop.public.orders': { inserts: 15, updates: 5, deletes: 2, truncates: 1 } }, schemaChanges: 3 });
    const another = await summarizeWalChanges(changes, files, new Set(['16999']));
    expect(another).toEqual({ tables: {}, ddl: [], schemaChanges: 0, explanation: expect.any(String) });
  });

  it('takes what ANALYZE writes into pg_statistic and its TOAST table for no schema change', async () => {
    const line = (tx: number, lsn: string, rel: number) => `rmgr: Heap        len (rec/tot):    104/   104, tx:        ${tx}, lsn: 0/${lsn}, prev 0/03000028, desc: INSERT off 2 flags 0x00, blkref #0: rel 1663/16407/${rel} blk 0`;
    const commit = (tx: number, lsn: string) => `rmgr: Transaction len (rec/tot):     34/    34, tx:        ${tx}, lsn: 0/${lsn}, prev 0/03000028, desc: COMMIT 2026-11-28 18:49:17.778238 UTC`;
    const analyze = [line(901, '03000100', 2619), line(901, '03000200', 2840), commit(901, '03000300'), line(902, '03000400', 3430), commit(902, '03000500')].join('\n');
    const { changes } = parseWaldump(analyze, START, SEGMENT);
    expect((await summarizeWalChanges(changes, resolver({}))).schemaChanges).toBe(0);
    const alter = [line(903, '03000100', 1249), commit(903, '03000200')].join('\n'); // pg_attribute: a column added
    expect((await summarizeWalChanges(parseWaldump(alter, START, SEGMENT).changes, resolver({}))).schemaChanges).toBe(1);
  });

  it('names a file the catalog no longer knows by its number, and never drops its rows', async () => {
    const { changes } = parseWaldump(WORKLOAD, START, SEGMENT);
    const summary = await summarizeWalChanges(changes, resolver({ '16407/16409': orders, '16407/16423': orders }));
    expect(summary.tables['relation file 16407/16417']).toEqual({ inserts: 3, updates: 0, deletes: 0, truncates: 0 });
    expect(summary.tables['shop.public.orders']?.updates).toBe(5);
  });

  it('gives the reason instead of a summary when the files cannot be named, and says it', async () => {
    const { changes } = parseWaldump(WORKLOAD, START, SEGMENT);
    const warned: string[] = [];
    const unreachable: RelationResolver = { resolve: async () => Promise.reject(new Error('connection to 10.0.0.5:5432 refused')) };
    expect(await summaryOrReason(changes, unreachable, (cause) => warned.push(cause))).toEqual({ summaryError: 'the change summary could not be made: connection to 10.0.0.5:5432 refused' });
    expect(warned).toEqual(['connection to 10.0.0.5:5432 refused']);
  });

  it('carries a transaction open at the end of a segment into the next, where it commits', async () => {
    const lines = WORKLOAD.split('\n');
    const commitOf739 = lines.findIndex((line) => /tx:\s+739, .*desc: COMMIT/.test(line));
    const first = parseWaldump(lines.slice(0, commitOf739).join('\n'), START, SEGMENT);
    expect(first.changes.open.has(739)).toBe(true);
    const next = parseWaldump(lines.slice(commitOf739, commitOf739 + 1).join('\n'), START, SEGMENT, first.changes.open);
    const summary = await summarizeWalChanges(next.changes, resolver({ '16407/16409': orders }));
    expect(summary.tables).toEqual({ 'shop.public.orders': { inserts: 12, updates: 0, deletes: 0, truncates: 0 } });
  });
});
