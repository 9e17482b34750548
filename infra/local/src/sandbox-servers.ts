import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { pidAlive } from './process.ts';

const execFileAsync = promisify(execFile);

/** The processes whose command line names a path under `dir` (a sandbox server is started on its data there). */
async function processesUnder(dir: string): Promise<Array<{ pid: number; args: string }>> {
  const { stdout } = await execFileAsync('ps', ['-eo', 'pid=,args=']);
  const prefix = `${path.resolve(dir)}${path.sep}`;
  return stdout
    .split('\n')
    .map((line) => /^\s*(\d+)\s+(.*)$/.exec(line))
    .filter((match): match is RegExpExecArray => match !== null && match[2]!.includes(prefix) && Number(match[1]) !== process.pid)
    .map((match) => ({ pid: Number(match[1]), args: match[2]! }));
}

/**
 * The sandbox service starts each sandbox's server detached, so that a restart of the service finds it still running.
 * When the whole stack stops they must stop too (nothing would stop them, and their ports and memory stay taken); the
 * next start of the stack starts them again on their data. Each gets the signal the sandbox runtime stops it with
 * (SIGINT, postgres's fast shutdown; SIGTERM for mariadbd); what still runs after `timeoutMs` is killed. Answers how
 * many servers were stopped.
 */
export async function stopSandboxServers(sandboxDir: string, timeoutMs = 15_000): Promise<number> {
  const servers = await processesUnder(sandboxDir);
  for (const { pid, args } of servers) process.kill(pid, /mariadbd|mysqld/.test(args) ? 'SIGTERM' : 'SIGINT');
  const pids = servers.map((s) => s.pid);
  const deadline = Date.now() + timeoutMs;
  while (pids.some((pid) => pidAlive(pid)) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  for (const pid of pids.filter((pid) => pidAlive(pid))) process.kill(pid, 'SIGKILL');
  return pids.length;
}
