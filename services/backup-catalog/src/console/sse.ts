import type { Request, Response } from 'express';
import type { ConsoleEvent, EventHub } from './events.ts';

const KEEP_ALIVE_MS = 15_000;

/** Frames: `event: <kind>`, `id: <version>`, `data: <Event JSON>`; a `: keep-alive` comment every 15 s. */
export function streamEvents(req: Request, res: Response, hub: EventHub): void {
  res.status(200);
  res.setHeader('content-type', 'text/event-stream; charset=utf-8');
  res.setHeader('cache-control', 'no-cache, no-transform');
  res.setHeader('x-accel-buffering', 'no');
  res.flushHeaders();
  res.write('retry: 3000\n\n');
  const write = (events: ConsoleEvent[]) => {
    for (const event of events) res.write(`event: ${event.kind}\nid: ${event.version}\ndata: ${JSON.stringify(event)}\n\n`);
  };
  const unsubscribe = hub.subscribe(write);
  const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), KEEP_ALIVE_MS);
  req.on('close', () => {
    clearInterval(keepAlive);
    unsubscribe();
  });
}
