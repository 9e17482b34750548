import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as Minio from 'minio';
import { startS3, type S3Handle } from '../src/s3.ts';

export function tempStateDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'sigil-infra-test-'));
}

export function removeDir(dir: string | undefined): void {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  // A zombie has exited but not been reaped yet: it is not running.
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true;
  }
}

/** The given pids and all their descendants, from /proc. */
export function processTree(roots: number[]): number[] {
  const children = new Map<number, number[]>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const list = children.get(ppid) ?? [];
      list.push(Number(entry));
      children.set(ppid, list);
    } catch {
      // raced with exit
    }
  }
  const out: number[] = [];
  const queue = [...roots];
  while (queue.length > 0) {
    const pid = queue.shift() as number;
    if (out.includes(pid)) continue;
    out.push(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  return out;
}

export function readPid(file: string): number {
  const pid = Number(fs.readFileSync(file, 'utf8').split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 0) throw new Error(`no pid in ${file}`);
  return pid;
}

/** An embedded S3 of the test's own (its state in a temporary folder), and minio clients for it. */
export interface TestS3 {
  s3: S3Handle;
  /** A path-style client; `retry: false` never retries, so a 500 shows. */
  client(options?: { retry?: boolean }): Minio.Client;
  stop(): Promise<void>;
}

export async function startTestS3(prefix: string): Promise<TestS3> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `${prefix}-`));
  const s3 = await startS3({ stateDir: dir, log: () => {} });
  const { hostname, port } = new URL(s3.endpoint);
  return {
    s3,
    client: ({ retry = true } = {}) =>
      new Minio.Client({
        endPoint: hostname, port: Number(port), useSSL: false, accessKey: s3.accessKey, secretKey: s3.secretKey, region: s3.region, pathStyle: true,
        ...(retry ? {} : { retryOptions: { disableRetry: true } }),
      }),
    async stop() {
      await s3.stop();
      removeDir(dir);
    },
  };
}
