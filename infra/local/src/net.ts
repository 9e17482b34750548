import net from 'node:net';

export const LOOPBACK = '127.0.0.1';

/** Ask the kernel for a free TCP port on loopback (bind port 0, read it, release). */
export async function freePort(host: string = LOOPBACK): Promise<number> {
  return await new Promise<number>((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once('error', reject);
    server.listen({ host, port: 0, exclusive: true }, () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error('could not get a free port'))));
    });
  });
}

/**
 * A free port for a server that is told its port before it starts (the gateway): below the kernel's ephemeral range
 * (32768 and up on Linux), so an outgoing connection made meanwhile cannot take it.
 */
export async function freeListenPort(host: string = LOOPBACK): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if (await isPortFree(port, host)) return port;
  }
  return await freePort(host);
}

/** True when nothing listens on host:port and we may bind it. */
export async function isPortFree(port: number, host: string = LOOPBACK): Promise<boolean> {
  if (!Number.isInteger(port) || port <= 0 || port > 65535) return false;
  return await new Promise<boolean>((resolve) => {
    const server = net.createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/** A remembered port when it is still free, otherwise a fresh one. */
export async function pickPort(remembered: number | undefined, host: string = LOOPBACK): Promise<number> {
  if (remembered !== undefined && (await isPortFree(remembered, host))) return remembered;
  return await freePort(host);
}

/** Open a TCP connection and close it; true when it connects within timeoutMs. */
export async function canConnect(host: string, port: number, timeoutMs: number): Promise<boolean> {
  return await new Promise<boolean>((resolve) => {
    const socket = net.connect({ host, port });
    const done = (ok: boolean): void => {
      socket.removeAllListeners();
      socket.on('error', () => {});
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** Reject after ms with a descriptive error, unless the promise settles first. */
export async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: timed out after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    if (timer) clearTimeout(timer);
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Hide the password of a URL before logging it. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return url;
  }
}

export function errorMessage(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) {
    return error.errors.map(errorMessage).join('; ');
  }
  if (error instanceof Error) return error.message || error.name;
  return String(error);
}
