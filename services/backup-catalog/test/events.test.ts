import { describe, expect, it, vi } from 'vitest';
import { createEventHub, type ConsoleEvent } from '../src/console/events.ts';

const event = (over: Partial<ConsoleEvent>): ConsoleEvent => ({ kind: 'backup', namespace: 'default', name: 'b1', phase: 'Running', stage: '', message: '', bytes: 0, version: 1, ...over });

describe('event hub', () => {
  it('coalesces updates per object every interval, keeping the latest', () => {
    vi.useFakeTimers();
    try {
      const hub = createEventHub(500);
      const batches: ConsoleEvent[][] = [];
      hub.subscribe((b) => batches.push(b));
      for (let i = 1; i <= 10; i++) hub.publish(event({ bytes: i }));
      hub.publish(event({ name: 'b2', bytes: 7 }));
      vi.advanceTimersByTime(499);
      expect(batches).toHaveLength(0);
      vi.advanceTimersByTime(1);
      expect(batches).toHaveLength(1);
      expect(batches[0]?.map((e) => [e.name, e.bytes])).toEqual([['b1', 10], ['b2', 7]]);
      vi.advanceTimersByTime(2000);
      expect(batches).toHaveLength(1);
      hub.stop();
    } finally {
      vi.useRealTimers();
    }
  });

  it('never lets late progress hide a final phase', () => {
    vi.useFakeTimers();
    try {
      const hub = createEventHub(500);
      const seen: ConsoleEvent[] = [];
      hub.subscribe((b) => seen.push(...b));
      hub.publish(event({ phase: 'Succeeded' }));
      hub.publish(event({ phase: 'Running', bytes: 99 }));
      vi.advanceTimersByTime(500);
      expect(seen.map((e) => e.phase)).toEqual(['Succeeded']);
      hub.stop();
    } finally {
      vi.useRealTimers();
    }
  });
});
