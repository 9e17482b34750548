// The load guard's judgement: which limits the measures are over, and how the postponement names them.
import { describe, expect, it } from 'vitest';
import { describeExceeded, exceededLimits } from '../src/jobs/load-guard.ts';

const quiet = { activeConnections: 2, longestTransactionSeconds: 0, replicationLagSeconds: 0, notes: [] };

describe('load guard limits', () => {
  it('is over a limit only when the measure is strictly above it', () => {
    expect(exceededLimits(quiet, { maxActiveConnections: 2, maxLongTransactionSeconds: 0, maxReplicationLagSeconds: 0, maxPostpones: 1 })).toEqual([]);
    expect(exceededLimits({ ...quiet, activeConnections: 3 }, { maxActiveConnections: 2, maxPostpones: 1 })).toEqual([{ limit: 'maxActiveConnections', measured: 3, max: 2 }]);
  });

  it('checks only the limits the policy sets, and never one the server could not measure', () => {
    const busy = { activeConnections: 90, longestTransactionSeconds: 600, notes: ['replication lag not measured: denied'] };
    expect(exceededLimits(busy, { maxReplicationLagSeconds: 5, maxPostpones: 3 })).toEqual([]);
    expect(exceededLimits(busy, { maxLongTransactionSeconds: 60, maxReplicationLagSeconds: 5, maxPostpones: 3 })).toEqual([{ limit: 'maxLongTransactionSeconds', measured: 600, max: 60 }]);
  });

  it('names every limit exceeded with the measured value', () => {
    const text = describeExceeded([
      { limit: 'maxLongTransactionSeconds', measured: 12, max: 5 },
      { limit: 'maxActiveConnections', measured: 1, max: 0 },
      { limit: 'maxReplicationLagSeconds', measured: 40, max: 30 },
    ]);
    expect(text).toBe("a transaction open for 12 s (maxLongTransactionSeconds 5); 1 connection open to the target's databases (maxActiveConnections 0); replication lag of 40 s (maxReplicationLagSeconds 30)");
  });
});
