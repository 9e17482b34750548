/**
 * The local runtime: each sandbox is a real server process (postgres of the backup's major, or mariadbd) on a free
 * loopback port, with its data under `<baseDir>/<sandbox id>`. Servers are detached from the service, so a restart of
 * the service leaves them running; `start` with the stored state adopts a server that still answers and starts one
 * again on its data otherwise. As root the servers run as the `postgres` / `mysql` accounts.
 */
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { directorySize } from './disk.ts';
import { mariadbServer } from './mariadb.ts';
import { postgresServer } from './postgres.ts';
import { type EngineServer, LOOPBACK, type RunAs, type RuntimeState, type SandboxRuntime, type ServerSpec } from './types.ts';

const execFileAsync = promisify(execFile);
const SERVERS: Record<ServerSpec['engine'], EngineServer> = { postgres: postgresServer, mysql: mariadbServer };

export function runAsAccount(account: string): RunAs | undefined {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return undefined;
  const line = fs.readFileSync('/etc/passwd', 'utf8').split('\n').find((l) => l.startsWith(`${account}:`));
  const [, , uid, gid] = line?.split(':') ?? [];
  if (!uid || !gid || uid === '0') throw new Error(`running as root, and there is no ${account} account to run sandbox servers as`);
  return { uid: Number(uid), gid: Number(gid) };
}

export async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, LOOPBACK, () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

export function pidAlive(pid: number | undefined): boolean {
  if (!pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The server account must be able to walk down to the sandboxes' directory. */
function makeReachable(dir: string): void {
  for (let current = path.resolve(dir); current !== path.dirname(current); current = path.dirname(current)) {
    const stat = fs.statSync(current);
    if ((stat.mode & 0o001) === 0) fs.chmodSync(current, (stat.mode & 0o7777) | 0o001);
  }
}

export function createLocalRuntime(options: { baseDir: string; readyTimeoutMs?: number }): SandboxRuntime {
  const readyTimeoutMs = options.readyTimeoutMs ?? 120_000;
  fs.mkdirSync(options.baseDir, { recursive: true });

  async function launch(spec: ServerSpec, dir: string): Promise<RuntimeState> {
    const engine = SERVERS[spec.engine];
    const user = runAsAccount(engine.account);
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      const { command, args } = engine.command(dir, spec, port);
      const logFd = fs.openSync(path.join(dir, 'server.log'), 'a');
      const child = spawn(command, args, { detached: true, stdio: ['ignore', logFd, logFd], cwd: os.tmpdir(), env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LC_ALL: 'C', TZ: 'UTC' }, ...(user ?? {}) });
      fs.closeSync(logFd);
      child.unref();
      let exited = false;
      child.once('exit', () => (exited = true));
      const deadline = Date.now() + readyTimeoutMs;
      let problem = 'did not start';
      while (!exited && Date.now() < deadline) {
        try {
          await engine.probe(spec, port);
          return { engine: spec.engine, dir, host: LOOPBACK, port, ...(child.pid ? { pid: child.pid } : {}) };
        } catch (error) {
          problem = (error as Error).message;
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
      }
      if (child.pid && !exited) process.kill(child.pid, 'SIGKILL');
      const tail = logTail(dir);
      if (attempt < 3 && /address already in use|could not bind|Can't start server: Bind/i.test(tail)) continue;
      throw new Error(`the ${spec.engine} server of the sandbox did not start (${problem}): ${tail.slice(-800)}`);
    }
  }

  const runtime: SandboxRuntime = {
    kind: 'local',
    async start(spec, previous) {
      if (previous && pidAlive(previous.pid)) {
        const alive = await SERVERS[spec.engine].probe(spec, previous.port).then(() => true, () => false);
        if (alive) return previous;
        process.kill(previous.pid as number, 'SIGKILL');
      }
      const dir = previous?.dir ?? path.join(options.baseDir, spec.id);
      if (!previous) {
        fs.rmSync(dir, { recursive: true, force: true });
        fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
        const user = runAsAccount(SERVERS[spec.engine].account);
        if (user) {
          makeReachable(options.baseDir);
          fs.chownSync(dir, user.uid, user.gid);
        }
        await SERVERS[spec.engine].init(dir, spec, user);
      }
      return await launch(spec, dir);
    },
    async alive(state) {
      return pidAlive(state.pid) && (await new Promise<boolean>((resolve) => {
        const socket = net.connect({ host: state.host, port: state.port });
        socket.setTimeout(2000, () => (socket.destroy(), resolve(false)));
        socket.once('connect', () => (socket.destroy(), resolve(true)));
        socket.once('error', () => resolve(false));
      }));
    },
    async stop(state) {
      if (!state.pid || !pidAlive(state.pid)) return;
      process.kill(state.pid, SERVERS[state.engine].stopSignal);
      const deadline = Date.now() + 20_000;
      while (pidAlive(state.pid) && Date.now() < deadline) {
        // A detached child that exited stays a zombie until reaped; `ps` tells a zombie from a live process.
        if (await isZombie(state.pid)) return;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      if (pidAlive(state.pid) && !(await isZombie(state.pid))) process.kill(state.pid, 'SIGKILL');
    },
    async wipe(state) {
      await runtime.stop(state);
      fs.rmSync(state.dir, { recursive: true, force: true });
    },
    async usedBytes(state) {
      return await directorySize(path.join(state.dir, 'data'));
    },
  };
  return runtime;
}

async function isZombie(pid: number): Promise<boolean> {
  try {
    const { stdout } = await execFileAsync('ps', ['-o', 'stat=', '-p', String(pid)]);
    return stdout.trim().startsWith('Z') || stdout.trim() === '';
  } catch {
    return true;
  }
}

function logTail(dir: string): string {
  try {
    return fs.readFileSync(path.join(dir, 'server.log'), 'utf8').slice(-4000);
  } catch {
    return '';
  }
}
