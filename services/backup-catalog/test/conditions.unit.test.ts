import { describe, expect, it } from 'vitest';
import { setStatusCondition, summarize, withConditions } from '../src/resources/conditions.ts';

const t1 = new Date('2026-03-01T10:00:00Z');
const t2 = new Date('2026-03-01T10:05:00Z');

describe('setStatusCondition', () => {
  it('keeps lastTransitionTime while the status stays, and takes the latest reason, message and generation', () => {
    const first = setStatusCondition(undefined, { type: 'Ready', status: 'False', reason: 'Unreachable', message: 'refused' }, 1, t1);
    const again = setStatusCondition(first, { type: 'Ready', status: 'False', reason: 'AuthFailed', message: 'denied' }, 2, t2);
    expect(again).toEqual([{ type: 'Ready', status: 'False', reason: 'AuthFailed', message: 'denied', observedGeneration: 2, lastTransitionTime: t1.toISOString() }]);
  });

  it('moves lastTransitionTime when the status changes, and leaves other conditions alone', () => {
    const start = setStatusCondition(setStatusCondition(undefined, { type: 'Ready', status: 'False', reason: 'Unreachable', message: '' }, 1, t1), { type: 'Scheduled', status: 'True', reason: 'RunQueued', message: '' }, 1, t1);
    const next = setStatusCondition(start, { type: 'Ready', status: 'True', reason: 'Ready', message: 'connected' }, 1, t2);
    expect(next.map((c) => [c.type, c.status, c.lastTransitionTime])).toEqual([
      ['Ready', 'True', t2.toISOString()],
      ['Scheduled', 'True', t1.toISOString()],
    ]);
  });
});

describe('summarize', () => {
  it('says nothing before Ready is known', () => {
    expect(summarize({ conditions: [{ type: 'Scheduled', status: 'False', message: 'missed' }] })).toBeUndefined();
  });

  it('is NotReady with the reason, Suspended for a suspended target, Ready with what else went wrong', () => {
    const status = (ready: Record<string, unknown>, ...others: Array<Record<string, unknown>>) => ({ conditions: [{ type: 'Ready', ...ready }, ...others] });
    expect(summarize(status({ status: 'False', reason: 'PolicyNotFound', message: 'policy p does not exist' }))).toEqual({ phase: 'NotReady', message: 'policy p does not exist' });
    expect(summarize(status({ status: 'False', reason: 'Suspended', message: 'suspended' }))).toEqual({ phase: 'Suspended', message: 'suspended' });
    expect(summarize(status({ status: 'True' }, { type: 'LastBackupSucceeded', status: 'False', message: 'pg_dump: boom' }))).toEqual({ phase: 'Ready', message: 'last backup failed: pg_dump: boom' });
    expect(summarize(status({ status: 'True' }, { type: 'LastBackupSucceeded', status: 'True', message: 'ok' }))).toEqual({ phase: 'Ready', message: '' });
  });

  it('is what withConditions writes next to the conditions', () => {
    const status = withConditions({ nextRunTime: t2.toISOString() }, [{ type: 'Ready', status: 'False', reason: 'Unreachable', message: 'refused' }], 3, t1);
    expect(status).toMatchObject({ nextRunTime: t2.toISOString(), phase: 'NotReady', message: 'refused', conditions: [{ type: 'Ready', observedGeneration: 3 }] });
  });
});
