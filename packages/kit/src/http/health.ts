import type { Express } from 'express';

export type ReadinessCheck = () => Promise<void>;

export interface Health {
  /** Flipped off when shutdown begins so load balancers stop sending traffic. */
  setShuttingDown(): void;
}

/** `/healthz`: the process is alive. `/readyz`: every dependency answers and we are not shutting down. */
export function mountHealth(app: Express, checks: Record<string, ReadinessCheck>): Health {
  let shuttingDown = false;
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    const results: Record<string, string> = {};
    let ready = !shuttingDown;
    await Promise.all(
      Object.entries(checks).map(async ([name, check]) => {
        try {
          await withTimeout(check(), 2000);
          results[name] = 'ok';
        } catch (error) {
          ready = false;
          results[name] = (error as Error).message;
        }
      }),
    );
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : shuttingDown ? 'shutting-down' : 'not-ready', checks: results });
  });
  return { setShuttingDown: () => void (shuttingDown = true) };
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
