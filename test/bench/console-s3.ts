// The console bench's S3: the local stack's own embedded S3 (s3rver, `startS3`), run as a process of the bench and
// handed to the stack as S3_ENDPOINT, with one change: a listing walks the bucket's folder once, not once per page.
//
// Why: the catalog's mirror pass lists the store every 5 minutes and marks every segment row it does not find as
// missing (the chain then breaks there), so the 50,000 seeded segments need their objects in the store. s3rver reads
// and stats every file of a folder for each page of 1,000 keys, synchronously: 50,000 objects in one WAL folder
// (150,000 files with their metadata) cost minutes of CPU a page, which a real S3 does not. Here a listing without
// a delimiter takes the sorted keys of one recursive read of the folder and answers its pages from them (a listing
// is a snapshot taken at its first page); everything else is s3rver's own code. In a process of its own, its work
// never stalls the bench's clock.
//
// Run as `node console-s3.ts <state dir> <facts file>` (startBenchS3 does): writes the endpoint and credentials to
// the facts file, serves until SIGTERM.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';

export interface BenchS3 {
  endpoint: string;
  region: string;
  accessKey: string;
  secretKey: string;
  /** The environment that makes startStack use it instead of starting its own. */
  env: Record<string, string>;
  stop(): Promise<void>;
}

/** Starts the S3 process and waits for its address (the process is this bench's: stop() ends it by its pid). */
export async function startBenchS3(stateDir: string): Promise<BenchS3> {
  const factsFile = path.join(stateDir, 'bench-s3.json');
  await rm(factsFile, { force: true });
  const child = spawn(process.execPath, [import.meta.filename, stateDir, factsFile], { stdio: ['ignore', 'ignore', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  try {
    const deadline = Date.now() + 60_000;
    while (!existsSync(factsFile)) {
      if (child.exitCode !== null) throw new Error(`the bench's S3 exited with code ${child.exitCode}`);
      if (Date.now() > deadline) throw new Error("the bench's S3 did not start within 60 s");
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const facts = JSON.parse(await readFile(factsFile, 'utf8')) as Omit<BenchS3, 'env' | 'stop'>;
    return { ...facts, env: { S3_ENDPOINT: facts.endpoint, S3_REGION: facts.region, S3_ACCESS_KEY: facts.accessKey, S3_SECRET_KEY: facts.secretKey }, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

interface StoreInternals {
  getBucketPath(bucket: string): string;
  getMetadata(bucket: string, key: string): Promise<unknown>;
}
interface ListOptions {
  delimiter?: string;
  startAfter?: string;
  prefix?: string;
  maxKeys?: number;
}

const OBJECT_SUFFIX = '._S3rver_object';

/** Replaces s3rver's listing without a delimiter by one over a snapshot of the bucket's sorted keys. */
function patchListing(): void {
  const require = createRequire(import.meta.url);
  const FilesystemStore = require('s3rver/lib/stores/filesystem.js') as { prototype: { listObjects(bucket: string, options: ListOptions): Promise<unknown> } };
  const S3Object = require('s3rver/lib/models/object.js') as new (bucket: string, key: string, content: null, metadata: unknown) => unknown;
  const original = FilesystemStore.prototype.listObjects;
  const snapshots = new Map<string, string[]>();
  FilesystemStore.prototype.listObjects = async function (this: StoreInternals, bucket: string, options: ListOptions) {
    const { delimiter = '', startAfter = '', prefix = '', maxKeys = Infinity } = options;
    if (delimiter) return original.call(this, bucket, options);
    const id = `${bucket}\n${prefix}`;
    if (!startAfter || !snapshots.has(id)) snapshots.set(id, await sortedKeys(this.getBucketPath(bucket), prefix));
    const keys = snapshots.get(id) as string[];
    const from = firstAfter(keys, startAfter);
    const page = keys.slice(from, from + Math.min(maxKeys, keys.length));
    const metadata = await Promise.all(page.map((key) => this.getMetadata(bucket, key).catch((error: NodeJS.ErrnoException) => (error.code === 'ENOENT' ? undefined : Promise.reject(error)))));
    return {
      objects: page.flatMap((key, i) => (metadata[i] === undefined ? [] : [new S3Object(bucket, key, null, metadata[i])])),
      commonPrefixes: [],
      isTruncated: from + page.length < keys.length,
    };
  };
}

/** Every key of the bucket under the prefix, sorted as S3 lists them (these keys are ASCII). */
async function sortedKeys(bucketPath: string, prefix: string): Promise<string[]> {
  const entries = await readdir(bucketPath, { recursive: true });
  return entries
    .filter((entry) => entry.endsWith(OBJECT_SUFFIX))
    .map((entry) => entry.slice(0, -OBJECT_SUFFIX.length).split(path.sep).join('/'))
    .filter((key) => key.startsWith(prefix))
    .sort();
}

/** The index of the first key after `startAfter` (binary search). */
function firstAfter(keys: string[], startAfter: string): number {
  let [low, high] = [0, keys.length];
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((keys[middle] as string) <= startAfter) low = middle + 1;
    else high = middle;
  }
  return low;
}

async function serve(stateDir: string, factsFile: string): Promise<void> {
  patchListing();
  const { startS3 } = await import('@sigil/local-stack');
  const s3 = await startS3({ stateDir, log: () => undefined });
  process.once('SIGTERM', () => void s3.stop().then(() => process.exit(0)));
  // Written whole, then renamed: the bench waits for the file to exist and reads it at once.
  await writeFile(`${factsFile}.part`, JSON.stringify({ endpoint: s3.endpoint, region: s3.region, accessKey: s3.accessKey, secretKey: s3.secretKey }), { mode: 0o600 });
  await rename(`${factsFile}.part`, factsFile);
}

if (import.meta.main) await serve(process.argv[2] as string, process.argv[3] as string);
