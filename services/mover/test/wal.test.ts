import { describe, expect, it } from 'vitest';
import { formatLsn, parseLsn, parseWaldump, parseWalFileName, waldumpReader, walFileName } from '../src/engines/postgres/wal.ts';
import { cutCoverage } from '../src/jobs/stream.ts';
import { recordBoundary } from '../src/engines/postgres/wal-receiver.ts';

const SEGMENT = 16 * 1024 * 1024;

describe('WAL positions and files', () => {
  it('reads and writes LSNs and names the file holding a position, and back', () => {
    expect(parseLsn('0/301B348')).toBe(0x301b348n);
    expect(formatLsn(parseLsn('1A/FF000028'))).toBe('1A/FF000028');
    expect(walFileName(1, parseLsn('0/3000028'))).toBe('000000010000000000000003');
    expect(walFileName(2, parseLsn('1A/FF000028'))).toBe('000000020000001A000000FF');
    expect(parseWalFileName('000000020000001A000000FF')).toEqual({ timeline: 2, start: parseLsn('1A/FF000000') });
    expect(() => parseLsn('3000028')).toThrow(/not a WAL position/);
    expect(() => parseWalFileName('000000010000000000000003.partial')).toThrow(/not a WAL file name/);
  });
});

describe('pg_waldump output', () => {
  const commit = (lsn: string, at: string) => `rmgr: Transaction len (rec/tot):     34/    34, tx:        725, lsn: ${lsn}, prev 0/0301B2D8, desc: COMMIT ${at} UTC`;

  it('counts commits with their times (microseconds kept) and ends where the next record would start', () => {
    const out = [commit('0/03000100', '2026-11-25 19:25:03.5822'), commit('0/0301B320', '2026-11-25 19:25:06.938547'), 'pg_waldump: error: error in WAL record at 0/301B320: invalid record length at 0/301B348: wanted 24, got 0'].join('\n');
    expect(parseWaldump(out, parseLsn('0/3000000'), SEGMENT)).toEqual({ endPos: parseLsn('0/301B348'), commits: 2, firstTime: '2026-11-25T19:25:03.582200Z', lastTime: '2026-11-25T19:25:06.938547Z', lastRecord: parseLsn('0/301B320'), changes: expect.objectContaining({ schemaTransactions: 0 }) });
  });

  it('takes the last good record as the end when the next page is not written yet, and the start when nothing is', () => {
    const unwritten = 'pg_waldump: error: error in WAL record at 0/3191DF98: invalid magic number 0000 in log segment 000000010000000000000031, offset 9560064';
    expect(parseWaldump(unwritten, parseLsn('0/31000000'), SEGMENT).endPos).toBe(parseLsn('0/3191DF98'));
    expect(parseWaldump('pg_waldump: error: could not find a valid record after 0/4000000', parseLsn('0/4000000'), SEGMENT).endPos).toBe(parseLsn('0/4000000'));
  });

  it('a segment read to its end without an error ends where the next one begins', () => {
    expect(parseWaldump(commit('0/03FFFF00', '2026-11-25 19:25:03.5'), parseLsn('0/3000000'), SEGMENT).endPos).toBe(parseLsn('0/4000000'));
  });
});

describe('what a partial cut covers', () => {
  const began = new Date('2026-11-26T10:00:05.000Z');
  const segment = parseLsn('0/5000000');

  it('covers the moment the cut began once the receiver holds what the server had flushed', () => {
    expect(cutCoverage({ endPos: segment + 0x2000n, lastTime: '2026-11-26T10:00:04.100000Z' }, segment + 0x2000n, began, false)).toEqual({ coveredUntil: began.toISOString() });
  });

  it('waits for a receiver behind the server, then covers only its last commit: a segment the server already left is no exception', () => {
    const behind = { endPos: segment + 0x2000n, lastTime: '2026-11-26T10:00:01.250000Z' };
    const serverInNextSegment = segment + BigInt(SEGMENT) + 0x400n;
    expect(cutCoverage(behind, serverInNextSegment, began, false)).toBe('wait');
    expect(cutCoverage(behind, serverInNextSegment, began, true)).toEqual({ coveredUntil: '2026-11-26T10:00:01.250000Z' });
    expect(cutCoverage({ endPos: segment }, serverInNextSegment, began, true)).toEqual({});
  });
});

describe('where the server inserts WAL', () => {
  it('names the page boundary when the insert position is just past a page header, else itself', () => {
    expect(recordBoundary(parseLsn('0/5002018'), SEGMENT)).toBe(parseLsn('0/5002000'));
    expect(recordBoundary(parseLsn('0/6000028'), SEGMENT)).toBe(parseLsn('0/6000000'));
    expect(recordBoundary(parseLsn('0/5002150'), SEGMENT)).toBe(parseLsn('0/5002150'));
  });
});

describe('a record that crosses into a segment', () => {
  const commit = (lsn: string, prev: string, at: string) => `rmgr: Transaction len (rec/tot):     34/    34, tx:        725, lsn: ${lsn}, prev ${prev}, desc: COMMIT ${at} UTC`;

  it("counts where it ends: read from the previous segment's last record, which is not counted again", () => {
    // pg_waldump --start 0/2FFFFD0 --end 0/4000000: the previous segment's last record, then the commit crossing
    // the boundary at 0/3000000, then one inside the segment.
    const reader = waldumpReader(parseLsn('0/3000000'), SEGMENT, parseLsn('0/2FFFFD0'));
    for (const line of [commit('0/02FFFFD0', '0/02FFFF00', '2026-11-26 10:00:01.5'), commit('0/02FFFFF8', '0/02FFFFD0', '2026-11-26 10:00:02.25'), commit('0/03000040', '0/02FFFFF8', '2026-11-26 10:00:03')]) reader.line(line);
    expect(reader.result()).toEqual({ endPos: parseLsn('0/4000000'), commits: 2, firstTime: '2026-11-26T10:00:02.250000Z', lastTime: '2026-11-26T10:00:03.000000Z', lastRecord: parseLsn('0/3000040'), changes: expect.objectContaining({ schemaTransactions: 0 }) });
  });

  it('ends no earlier than its own start when the crossing record is not complete yet', () => {
    const reader = waldumpReader(parseLsn('0/3000000'), SEGMENT, parseLsn('0/2FFFFD0'));
    reader.line('pg_waldump: error: error in WAL record at 0/2FFFFF8: invalid record length at 0/2FFFFF8: wanted 24, got 0');
    expect(reader.result()).toEqual({ endPos: parseLsn('0/3000000'), commits: 0, changes: expect.objectContaining({ schemaTransactions: 0 }) });
  });
});
