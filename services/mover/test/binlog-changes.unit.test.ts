import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseBinlogText } from '../src/engines/mysql/binlog.ts';
import { summaryOf } from '../src/engines/change-summary.ts';

/**
 * `mariadb-binlog --base64-output=decode-rows` of a MariaDB 10.11 binlog (ROW format) of this script on `shop`:
 * CREATE TABLE orders; one INSERT of 12 rows; UPDATE of 5; DELETE of 2; ALTER TABLE … ADD COLUMN; TRUNCATE TABLE;
 * an INSERT rolled back (never in the binlog); INSERT INTO shop.orders of 1 row.
 */
const WORKLOAD = readFileSync(new URL('./data/binlog-changes.txt', import.meta.url), 'utf8');

describe('the changes of a binlog', () => {
  it('counts each table\'s rows and keeps the DDL statements exactly, in order', () => {
    const { changes, commits } = parseBinlogText(WORKLOAD);
    expect(commits).toBe(7);
    const summary = summaryOf(changes.tables, changes.ddl);
    expect(summary).toEqual({
      tables: { 'shop.orders': { inserts: 13, updates: 5, deletes: 2, truncates: 1 } },
      ddl: ['CREATE TABLE orders (id INT AUTO_INCREMENT PRIMARY KEY, note TEXT)', 'ALTER TABLE orders ADD COLUMN tier TEXT'],
      explanation: 'CREATE TABLE orders (id INT AUTO_INCREMENT PRIMARY KEY, note TEXT); ALTER TABLE orders ADD COLUMN tier TEXT; 13 inserts into shop.orders; 5 updates to shop.orders; 2 deletes from shop.orders; 1 truncate of shop.orders',
    });
  });

  it('counts nothing of a transaction whose commit is not in the file yet', () => {
    const cut = WORKLOAD.slice(0, WORKLOAD.indexOf('\tXid = 9'));
    const { changes } = parseBinlogText(cut);
    expect(changes.tables.record()).toEqual({ 'shop.orders': { inserts: 12, updates: 0, deletes: 0, truncates: 0 } });
    expect(changes.ddl).toEqual(['CREATE TABLE orders (id INT AUTO_INCREMENT PRIMARY KEY, note TEXT)']);
  });

  it('reads a statement over several lines and a TRUNCATE naming its database', () => {
    const header = (pos: number, what: string) => `#261126 10:41:07 server id 1  end_log_pos ${pos} CRC32 0x00000001 \t${what}`;
    const query = (pos: number) => header(pos, 'Query\tthread_id=4\texec_time=0\terror_code=0\txid=0');
    const text = [
      header(100, 'GTID 0-1-20 ddl'), query(200), 'use `app`/*!*/;', 'SET TIMESTAMP=1795689667/*!*/;', 'CREATE TABLE t (', '  id INT', ')', '/*!*/;',
      header(250, 'GTID 0-1-21 ddl'), query(300), 'TRUNCATE TABLE `other`.`log`', '/*!*/;',
      header(350, 'GTID 0-1-22 ddl'), query(400), 'truncate t', '/*!*/;',
    ];
    const { changes } = parseBinlogText(text.join('\n'));
    expect(changes.ddl).toEqual(['CREATE TABLE t (\n  id INT\n)']);
    expect(changes.tables.record()).toEqual({ 'app.t': { inserts: 0, updates: 0, deletes: 0, truncates: 1 }, 'other.log': { inserts: 0, updates: 0, deletes: 0, truncates: 1 } });
  });
});
