import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { FORCED_IDENTITY, parseBinlogText, ReplayIdentityFilter } from '../src/engines/mysql/binlog.ts';

/**
 * `mariadb-binlog --base64-output=never` of a MariaDB 10.11 binlog holding four DDL groups, an Aria and a MyISAM
 * insert (unflagged groups ending with a COMMIT query), an InnoDB insert (Xid), and an XA transaction (its
 * prepare ends with an XID event, its commit is a group of one XA COMMIT query).
 */
const GROUPS = readFileSync(new URL('./data/binlog-groups.txt', import.meta.url), 'utf8');

describe('reading a binlog', () => {
  it('ends every kind of GTID group where it ends, and counts each once', () => {
    expect(parseBinlogText(GROUPS)).toMatchObject({ end: 2014, commits: 9 });
  });

  it('never ends a non-transactional group before its COMMIT', () => {
    const upToRows = GROUPS.slice(0, GROUPS.indexOf('end_log_pos 1156'));
    expect(parseBinlogText(upToRows)).toMatchObject({ end: 917, commits: 4 });
  });

  it('ends a group at its COMMIT, not at a ROLLBACK TO a savepoint inside it; a standalone statement is a group of one', () => {
    const header = (pos: number, what: string) => `#261126 10:41:07 server id 1  end_log_pos ${pos} CRC32 0x00000001 \t${what}`;
    const query = (pos: number) => header(pos, 'Query\tthread_id=4\texec_time=0\terror_code=0\txid=0');
    const text = [
      header(100, 'GTID 0-1-20'), '/*M!100001 SET @@session.gtid_seq_no=20*//*!*/;', 'START TRANSACTION', '/*!*/;',
      query(200), 'SAVEPOINT `a`', '/*!*/;', query(300), 'ROLLBACK TO `a`', '/*!*/;',
    ];
    expect(parseBinlogText(text.join('\n'))).toMatchObject({ end: 0, commits: 0 });
    text.push(query(400), 'SET TIMESTAMP=1795689667/*!*/;', 'COMMIT', '/*!*/;', header(450, 'GTID 0-1-21'), '/*M!100001 SET @@session.gtid_seq_no=21*//*!*/;', query(500), 'FLUSH PRIVILEGES', '/*!*/;');
    expect(parseBinlogText(text.join('\n'))).toMatchObject({ end: 500, commits: 2 });
  });

  it('keeps the span of times when a replayed statement brings an older one', () => {
    const older = GROUPS.replace(/^#261126 10:41:07( server id 1 +end_log_pos 1596 )/m, '#261126 09:00:00$1');
    expect(parseBinlogText(older)).toMatchObject({ firstTime: '2026-11-26T09:00:00.000000Z', lastTime: '2026-11-26T10:41:07.000000Z' });
  });
});

describe('replaying a binlog', () => {
  it('drops the statements that would force the original GTID and server id, and nothing else', async () => {
    const filter = new ReplayIdentityFilter();
    const chunks: Buffer[] = [];
    filter.on('data', (chunk: Buffer) => chunks.push(chunk));
    const input = Buffer.from(GROUPS, 'utf8');
    for (let i = 0; i < input.length; i += 97) filter.write(input.subarray(i, i + 97)); // lines split across chunks
    await new Promise<void>((resolve) => filter.end(resolve));
    const out = Buffer.concat(chunks).toString('utf8');
    const expected = GROUPS.split('\n').filter((line) => !FORCED_IDENTITY.test(line)).join('\n');
    expect(out).toBe(expected);
    expect(GROUPS).toMatch(/SET @@session\.gtid_seq_no=9/);
    expect(out).not.toMatch(/gtid_seq_no|gtid_domain_id|@@session\.server_id/);
    expect(out).toContain('XA COMMIT');
    expect(FORCED_IDENTITY.test("SET @@SESSION.GTID_NEXT= 'b0c5e6a2-0000-11ee-8000-000000000001:7'/*!*/;")).toBe(true);
  });

  it('passes a statement of many megabytes through as it comes, in linear time', async () => {
    const filter = new ReplayIdentityFilter();
    let bytes = 0;
    filter.on('data', (chunk: Buffer) => (bytes += chunk.length));
    const long = Buffer.alloc(64 * 1024, 0x61);
    filter.write(Buffer.from('INSERT INTO t VALUES ('));
    for (let i = 0; i < 512; i++) filter.write(long); // 32 MiB on one line
    filter.write(Buffer.from(');\n/*M!100001 SET @@session.gtid_seq_no=9*//*!*/;\nCOMMIT\n'));
    await new Promise<void>((resolve) => filter.end(resolve));
    expect(bytes).toBe('INSERT INTO t VALUES ('.length + 512 * long.length + ');\n'.length + 'COMMIT\n'.length);
  });
});
