import fs from 'node:fs';
import path from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/transport-node';
import { errorMessage, LOOPBACK, pickPort, sleep, withTimeout } from './net.ts';
import { adoptProcess, claimOwner, ownerAlive, pidAlive, spawnServer, which } from './process.ts';
import type { ManagedProcess } from './process.ts';
import { readNumber } from './server-user.ts';

export interface NatsHandle {
  url: string;
  port: number;
  process: ManagedProcess | undefined;
  stop(): Promise<void>;
}

export interface StartNatsOptions {
  stateDir: string;
  env: NodeJS.ProcessEnv;
  log: (line: string) => void;
  readyTimeoutMs?: number;
}

/** Undefined when the server accepts a connection and its JetStream API answers, otherwise why not. */
export async function probeNats(url: string, timeoutMs = 2000): Promise<string | undefined> {
  let nc: NatsConnection | undefined;
  try {
    return await withTimeout(
      (async () => {
        nc = await connect({
          servers: url.split(',').map((s) => s.trim()).filter(Boolean),
          timeout: timeoutMs,
          reconnect: false,
          maxReconnectAttempts: 0,
          name: 'sigil-infra-probe',
        });
        if (nc.info && nc.info.jetstream === false) return 'the server does not have JetStream enabled';
        const jsm = await jetstreamManager(nc, { timeout: timeoutMs });
        await jsm.getAccountInfo();
        return undefined;
      })(),
      timeoutMs * 2,
      `NATS ${url}`,
    );
  } catch (error) {
    return errorMessage(error);
  } finally {
    const conn = nc as NatsConnection | undefined;
    if (conn) await conn.close().catch(() => {});
  }
}

function findNatsServer(env: NodeJS.ProcessEnv): string | undefined {
  const pathValue = [env.PATH ?? process.env.PATH ?? '', '/usr/sbin', '/usr/local/sbin', '/usr/local/bin', '/usr/bin'].join(path.delimiter);
  return which('nats-server', pathValue);
}


export async function startNats(options: StartNatsOptions): Promise<NatsHandle> {
  const { stateDir, log } = options;
  const readyTimeoutMs = options.readyTimeoutMs ?? 30_000;
  const storeDir = path.join(stateDir, 'nats');
  const portFile = path.join(stateDir, 'nats.port');
  const pidFile = path.join(stateDir, 'nats.pid');
  const ownerFile = path.join(stateDir, 'nats.owner');
  const logFile = path.join(stateDir, 'logs', 'nats.log');

  const binary = findNatsServer(options.env);
  if (!binary) {
    throw new Error(
      'nats-server not found on PATH or in /usr/sbin. Install it (Debian/Ubuntu: `apt-get install nats-server`), ' +
        'or set NATS_URL to a running server with JetStream enabled.',
    );
  }

  // A server left running on our store dir (killed parent, or another process sharing this state dir).
  const oldPid = readNumber(pidFile);
  const oldPort = readNumber(portFile);
  if (oldPid !== undefined && oldPort !== undefined && pidAlive(oldPid, storeDir)) {
    const url = `nats://${LOOPBACK}:${oldPort}`;
    if ((await probeNats(url)) === undefined) {
      if (ownerAlive(ownerFile)) {
        log(`nats: sharing the nats-server a live process (see nats.owner) started on ${storeDir} (pid ${oldPid}, port ${oldPort}); it will not be stopped`);
        return { url, port: oldPort, process: undefined, stop: async () => {} };
      }
      // Left behind by a run that died without stopping it: take it over.
      const release = claimOwner(ownerFile);
      const adopted = adoptProcess({ name: 'nats', pid: oldPid, logFile, stopSignal: 'SIGTERM', stopTimeoutMs: 10_000 });
      log(`nats: took over the nats-server left running on ${storeDir} (pid ${oldPid}, port ${oldPort})`);
      return {
        url,
        port: oldPort,
        process: adopted,
        stop: async () => {
          await adopted.stop();
          release();
        },
      };
    }
  }

  fs.mkdirSync(storeDir, { recursive: true });
  let remembered = readNumber(portFile);
  for (let attempt = 1; ; attempt++) {
    const port = await pickPort(remembered);
    remembered = undefined;
    const child = await spawnServer({
      name: 'nats',
      command: binary,
      args: ['-js', '-a', LOOPBACK, '-p', String(port), '-sd', storeDir, '-P', pidFile, '-n', 'sigil-local'],
      logFile,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      cwd: stateDir,
      stopSignal: 'SIGTERM',
      stopTimeoutMs: 10_000,
    });
    const url = `nats://${LOOPBACK}:${port}`;
    const deadline = Date.now() + readyTimeoutMs;
    let problem: string | undefined = 'not started';
    while (!child.hasExited() && Date.now() < deadline) {
      problem = await probeNats(url, 1000);
      if (problem === undefined) break;
      await sleep(100);
    }
    if (problem === undefined && !child.hasExited()) {
      fs.writeFileSync(portFile, `${port}\n`);
      const release = claimOwner(ownerFile);
      log(`nats: started nats-server with JetStream on ${LOOPBACK}:${port} (pid ${child.pid}, store ${storeDir})`);
      return {
        url,
        port,
        process: child,
        stop: async () => {
          await child.stop();
          release();
        },
      };
    }
    await child.stop();
    const tail = child.logTail();
    if (attempt < 3 && /address already in use|can't listen/i.test(tail)) {
      log(`nats: port ${port} was taken, retrying on another port`);
      continue;
    }
    throw new Error(`nats: nats-server did not become ready (${problem}). Log ${child.logFile}:\n${tail}`);
  }
}
