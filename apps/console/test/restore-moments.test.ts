import { describe, expect, it } from 'vitest';
import { momentsOf } from '../src/pages/restores/restore-moments.ts';

describe('the moments of a restore', () => {
  const backupTime = '2026-11-28T05:48:01.960Z';
  const asked = '2026-11-28T06:00:00Z';

  it('its data are as of the plan’s effective time, whatever the segments or the backup say', () => {
    // Replaying the change log: the moment asked, not the base backup's time.
    expect(momentsOf({ targetTime: asked, effectiveTime: asked }, backupTime)).toEqual({ asked: Date.parse(asked), effective: Date.parse(asked) });
    // Without change capture: the newest full at or before the moment asked, which need not be the backup read here.
    expect(momentsOf({ targetTime: asked, effectiveTime: '2026-11-28T05:30:00Z' }, backupTime)).toEqual({ asked: Date.parse(asked), effective: Date.parse('2026-11-28T05:30:00Z') });
  });

  it('a restore to latest without change capture asks for no moment, its data as of the plan’s effective time', () => {
    expect(momentsOf({ targetTime: null, effectiveTime: '2026-11-28T05:30:00Z' }, backupTime)).toEqual({ effective: Date.parse('2026-11-28T05:30:00Z') });
  });

  it('a plan made before the catalog recorded the effective time: the moment asked when it replayed the change log, else the backup’s time', () => {
    expect(momentsOf({ targetTime: asked, effectiveTime: null, segments: 0 }, backupTime)).toEqual({ asked: Date.parse(asked), effective: Date.parse(backupTime) });
    expect(momentsOf({ targetTime: asked }, backupTime)).toEqual({ asked: Date.parse(asked), effective: Date.parse(backupTime) });
    expect(momentsOf({ targetTime: asked, effectiveTime: null, segments: 3 }, backupTime)).toEqual({ asked: Date.parse(asked), effective: Date.parse(asked) });
  });

  it('a backup chosen by id (no plan) asks for no moment and shows the backup’s time', () => {
    expect(momentsOf(null, backupTime)).toEqual({ effective: Date.parse(backupTime) });
    expect(momentsOf(undefined, null)).toEqual({});
  });
});
