import { describe, expect, it } from 'vitest';
import { decide, jitterFor, scheduleFor } from '../src/scheduling/schedule.ts';
import { RESOURCE_API_VERSION, validateResource, type BackupPolicySpec } from '@sigil/proto/resources';

/** A policy as the catalog holds it: validated, every default of the schema applied. */
function policy(full: Partial<BackupPolicySpec['full']>): BackupPolicySpec {
  const result = validateResource({ apiVersion: RESOURCE_API_VERSION, kind: 'BackupPolicy', metadata: { name: 'p' }, spec: { store: 's', full } });
  if (!result.ok) throw new Error(result.errors.map((e) => e.message).join('; '));
  return result.resource.spec as BackupPolicySpec;
}
const at = (iso: string) => new Date(iso);

describe('schedule', () => {
  it('reads 5-field cron in the policy time zone', () => {
    const s = scheduleFor(policy({ schedule: '0 3 * * *', timeZone: 'Europe/Paris' }), 'uid-1');
    // 03:00 in Paris is 02:00 UTC in winter.
    expect(s.slotAfter(at('2026-11-21T00:00:00Z')).toISOString()).toBe('2026-11-21T02:00:00.000Z');
    const ny = scheduleFor(policy({ schedule: '30 1 * * 1', timeZone: 'America/New_York' }), 'uid-1');
    expect(ny.slotAfter(at('2026-11-21T00:00:00Z')).toISOString()).toBe('2026-11-23T06:30:00.000Z');
  });

  it('gives each target a stable jitter below the maximum', () => {
    const a = jitterFor('target-a', '30m');
    expect(a).toBe(jitterFor('target-a', '30m'));
    expect(a).toBeGreaterThanOrEqual(0);
    expect(a).toBeLessThan(30 * 60_000);
    const spread = new Set(Array.from({ length: 20 }, (_, i) => jitterFor(`t-${i}`, '1h')));
    expect(spread.size).toBeGreaterThan(15);
    expect(jitterFor('x', undefined)).toBe(0);
  });

  it('is not due before the slot plus jitter', () => {
    const s = scheduleFor(policy({ schedule: '0 * * * *', jitter: '10m' }), 'uid-2');
    const decision = decide(s, at('2026-11-21T10:00:00Z'), at('2026-11-21T10:30:00Z'));
    if (s.jitterMs > 30 * 60_000) throw new Error('unexpected jitter');
    expect(decision.due).toBe(false);
    expect(decision.nextRun.getTime()).toBe(at('2026-11-21T11:00:00Z').getTime() + s.jitterMs);
  });

  it('runs a due slot once, collapsing several missed ones into the latest', () => {
    const s = scheduleFor(policy({ schedule: '0 * * * *' }), 'uid-3');
    const decision = decide(s, at('2026-11-21T06:00:00Z'), at('2026-11-21T10:05:00Z'));
    expect(decision).toMatchObject({ due: true, run: true });
    if (decision.due) expect(decision.slot.toISOString()).toBe('2026-11-21T10:00:00.000Z');
    expect(decision.nextRun.toISOString()).toBe('2026-11-21T11:00:00.000Z');
  });

  it('skips a missed run older than startingDeadline', () => {
    const s = scheduleFor(policy({ schedule: '0 3 * * *', startingDeadline: '6h' }), 'uid-4');
    const late = decide(s, at('2026-11-20T04:00:00Z'), at('2026-11-21T10:00:00Z'));
    expect(late).toMatchObject({ due: true, run: false });
    const inTime = decide(s, at('2026-11-20T04:00:00Z'), at('2026-11-21T08:59:00Z'));
    expect(inTime).toMatchObject({ due: true, run: true });
  });

  it('accepts day and week durations for the deadline', () => {
    const s = scheduleFor(policy({ schedule: '0 0 1 * *', startingDeadline: '2w' }), 'uid-5');
    expect(s.startingDeadlineMs).toBe(14 * 86_400_000);
    expect(decide(s, at('2026-10-15T00:00:00Z'), at('2026-11-10T00:00:00Z'))).toMatchObject({ due: true, run: true });
  });
});
