import { describe, expect, it } from 'vitest';
import { createRefetchGate } from '../src/refetch-gate.ts';

/**
 * A page's query, as urql runs it: `refetch` starts a read (fetching) and replaces any read in flight, which then never
 * answers. Events arrive every 650 ms (the stream's 500 ms coalescing and the page's 150 ms debounce); a read takes
 * 1.5 s (a busy server). Without the gate the page never gets an answer.
 */
function simulate(gated: boolean): { answers: number; reads: number } {
  const READ_MS = 1500;
  const EVENT_EVERY_MS = 650;
  let inFlightUntil: number | undefined;
  let answers = 0;
  let reads = 0;
  let now = 0;
  const refetch = () => {
    reads += 1;
    inFlightUntil = now + READ_MS; // replaces the read in flight
  };
  const gate = createRefetchGate(refetch);
  refetch(); // the page's first read
  gate.fetching(true);
  for (now = 0; now <= 20_000; now += 50) {
    if (inFlightUntil !== undefined && now >= inFlightUntil) {
      inFlightUntil = undefined;
      answers += 1;
      gate.fetching(false);
      if (inFlightUntil !== undefined) gate.fetching(true); // the gate read again at once
    }
    if (now > 0 && now % EVENT_EVERY_MS === 0) {
      if (gated) gate.request();
      else refetch();
      if (inFlightUntil !== undefined) gate.fetching(true);
    }
  }
  return { answers, reads };
}

describe('the refetch gate', () => {
  it('lets every read answer while events come faster than the query', () => {
    expect(simulate(false).answers, 'refetching on every event').toBe(0);
    const gated = simulate(true);
    expect(gated.answers).toBeGreaterThanOrEqual(12);
    expect(gated.reads - gated.answers).toBeLessThanOrEqual(1);
  });

  it('reads at once when idle, and once more for every burst that came while fetching', () => {
    const reads: number[] = [];
    const gate = createRefetchGate(() => reads.push(reads.length));
    gate.request();
    expect(reads).toHaveLength(1);
    gate.fetching(true);
    gate.request();
    gate.request();
    expect(reads).toHaveLength(1);
    gate.fetching(false);
    expect(reads).toHaveLength(2);
    gate.fetching(false);
    expect(reads).toHaveLength(2);
  });
});
