import { describe, expect, it } from 'vitest';
import type { SegmentObject } from '@sigil/proto/strata-jobs';
import { replayStart } from '../src/restores/recovery-bundle.ts';

const binlog = (name: string): SegmentObject => ({ name, key: `wal/${name}.zst.age`, sha256: 'a'.repeat(64), partial: false, compression: 'zstd', size: 10 });
const segments = ['mb.000003', 'mb.000004', 'mb.000005'].map(binlog);

describe('where a download bundle replays a dump from', () => {
  it("from the dump's own position, in its own binlog, leaving out the binlogs before it", () => {
    const start = replayStart({ database: 'crm', position: { binlogFile: 'mb.000004', binlogPos: 812 } }, { binlogFile: 'mb.000003', binlogPos: 4021 }, segments);
    expect(start).toEqual({ startPosition: 812, binlogs: segments.slice(1) });
  });

  it("from the backup's position when the dump records none (backups before it did)", () => {
    expect(replayStart({ database: 'shop' }, { binlogFile: 'mb.000003', binlogPos: 4021 }, segments)).toEqual({ startPosition: 4021, binlogs: segments });
  });

  it('refuses without a position, or when the binlog holding it is not in the plan', () => {
    expect(() => replayStart({ database: 'shop' }, undefined, segments)).toThrow(/records no binlog position/);
    expect(() => replayStart({ database: 'shop', position: { binlogFile: 'mb.000002', binlogPos: 9 } }, undefined, segments)).toThrow(/mb\.000002 holding the position of shop is not among the segments/);
  });
});
