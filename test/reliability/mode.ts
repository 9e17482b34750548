/**
 * How hard the reliability suite pushes: `quick` (the default, what CI runs: bounded to minutes) or `long` (a night:
 * `RELIABILITY_MODE=long npm run test:reliability`).
 */
export const RELIABILITY_MODE: 'quick' | 'long' = process.env.RELIABILITY_MODE === 'long' ? 'long' : 'quick';

if (process.env.RELIABILITY_MODE && !['quick', 'long'].includes(process.env.RELIABILITY_MODE)) {
  throw new Error(`RELIABILITY_MODE must be quick or long, not ${process.env.RELIABILITY_MODE}`);
}

/** The quick mode's value, or the long mode's. */
export function quick<T>(quickValue: T, longValue: T): T {
  return RELIABILITY_MODE === 'long' ? longValue : quickValue;
}
