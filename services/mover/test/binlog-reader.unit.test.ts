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
});
