import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/**
 * s3rver's filesystem store is not safe for an object read, written and deleted at the same moment, which a backup's
 * lease does all the time (one attempt renews its claim every few seconds while another lists and reads it). Three
 * faults, each seen in CI, each fixed here for the whole process:
 *
 * - An overwrite truncated the object's file and its metadata file in place. A read in between got torn bytes, a
 *   listing or read got a torn metadata file (JSON parse error: 500), and, worst, a read that had taken the size from
 *   one version and streamed the file after it was truncated answered fewer bytes than its Content-Length: the client
 *   waited for the rest forever (a waiting attempt hung until the test timed out). Writes now go to a temporary file
 *   renamed into place, metadata first and the object last, so a reader sees one whole version; a read opens the file
 *   once and takes its size from that open file, so it always sends exactly what it announced.
 * - A PUT answered before its bytes were on disk (the file stream was not awaited): now it is.
 * - A delete removed the folders it left empty, up to the bucket, with an `await` between looking and removing; a write
 *   under the same prefix lost its folder between creating it and opening its file (500). Writes in flight are counted
 *   per folder, and empty folders are removed synchronously, never one a write is using; one that cannot be removed is
 *   left (an empty folder lists nothing).
 */
interface StoredObject {
  bucket: string;
  key: string;
  content: Buffer | Readable | null;
  metadata: Record<string, string>;
  range?: { start: number; end: number };
}

interface FilesystemStore {
  getBucketPath(bucket: string): string;
  getResourcePath(bucket: string, key: string, resource: string): string;
  getObject(bucket: string, key: string, options?: { start?: number; end?: number }): Promise<StoredObject | null>;
  putObject(object: StoredObject): Promise<{ size: number; md5: string }>;
  putMetadata(bucket: string, key: string, metadata: Record<string, string>, md5?: string): Promise<void>;
  deleteObject(bucket: string, key: string): Promise<void>;
}

type S3ObjectClass = (new (bucket: string, key: string, content: Readable | null, metadata: Record<string, unknown>) => StoredObject) & { ALLOWED_METADATA: string[] };

let installed = false;

export function installS3rverStoreFixes(): void {
  if (installed) return;
  installed = true;
  const require = createRequire(import.meta.url);
  const store = (require('s3rver/lib/stores/filesystem.js') as { prototype: FilesystemStore }).prototype;
  const S3Object = require('s3rver/lib/models/object.js') as S3ObjectClass;
  const writing = new WritesInFlight();

  store.putMetadata = async function (this: FilesystemStore, bucket, key, metadata, md5) {
    const kept = Object.fromEntries(Object.entries(metadata).filter(([name]) => S3Object.ALLOWED_METADATA.includes(name) || name.startsWith('x-amz-meta-')));
    if (md5) await writeAtomically(this.getResourcePath(bucket, key, 'object.md5'), md5);
    await writeAtomically(this.getResourcePath(bucket, key, 'metadata.json'), JSON.stringify(kept, null, 2));
  };

  store.putObject = async function (this: FilesystemStore, object) {
    const objectPath = this.getResourcePath(object.bucket, object.key, 'object');
    return await writing.under(foldersOf(objectPath, this.getBucketPath(object.bucket)), async () => {
      await fs.promises.mkdir(path.dirname(objectPath), { recursive: true });
      const temporary = temporaryPath(objectPath);
      try {
        const { size, md5 } = await writeCounted(object.content, temporary);
        await this.putMetadata(object.bucket, object.key, object.metadata, md5);
        await fs.promises.rename(temporary, objectPath);
        return { size, md5 };
      } catch (error) {
        await fs.promises.unlink(temporary).catch(() => undefined);
        throw error;
      }
    });
  };

  store.getObject = async function (this: FilesystemStore, bucket, key, options) {
    const objectPath = this.getResourcePath(bucket, key, 'object');
    const file = await fs.promises.open(objectPath, 'r').catch((error: NodeJS.ErrnoException) => (error.code === 'ENOENT' ? undefined : Promise.reject(error)));
    if (!file) return null;
    try {
      const metadata = await metadataOf(this, bucket, key, file);
      const lastByte = Math.max(0, Number(metadata['content-length']) - 1);
      const range = { start: options?.start ?? 0, end: Math.min(options?.end || Infinity, lastByte) };
      const ranged = options !== undefined && (options.start !== undefined || Boolean(options.end));
      const satisfiable = range.start >= 0 && range.end >= range.start;
      if (!satisfiable) await file.close();
      // The stream reads the file this request opened (and closes it): the size announced is the size sent.
      const object = new S3Object(bucket, key, satisfiable ? file.createReadStream({ start: range.start, end: range.end }) : null, metadata);
      if (ranged) object.range = range;
      return object;
    } catch (error) {
      await file.close().catch(() => undefined);
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  };

  store.deleteObject = async function (this: FilesystemStore, bucket, key) {
    const files = ['object', 'object.md5', 'metadata.json'].map((resource) => this.getResourcePath(bucket, key, resource));
    await Promise.all(files.map((file) => fs.promises.unlink(file).catch((error: NodeJS.ErrnoException) => (error.code === 'ENOENT' ? undefined : Promise.reject(error)))));
    for (const folder of foldersOf(files[0]!, this.getBucketPath(bucket))) {
      if (writing.uses(folder)) return;
      try {
        if (fs.readdirSync(folder).length > 0) return;
        fs.rmdirSync(folder);
      } catch {
        return;
      }
    }
  };
}

/** How many writes are under way beneath each folder. */
class WritesInFlight {
  private readonly counts = new Map<string, number>();

  async under<T>(folders: string[], work: () => Promise<T>): Promise<T> {
    this.count(folders, 1);
    try {
      return await work();
    } finally {
      this.count(folders, -1);
    }
  }

  uses(folder: string): boolean {
    return this.counts.has(folder);
  }

  private count(folders: string[], by: 1 | -1): void {
    for (const folder of folders) {
      const n = (this.counts.get(folder) ?? 0) + by;
      if (n > 0) this.counts.set(folder, n);
      else this.counts.delete(folder);
    }
  }
}

/** The stored metadata of the version `file` holds: its size and date from the open file, not from the path. */
async function metadataOf(store: FilesystemStore, bucket: string, key: string, file: fs.promises.FileHandle): Promise<Record<string, string | number>> {
  const stat = await file.stat();
  const stored = await fs.promises.readFile(store.getResourcePath(bucket, key, 'metadata.json'), 'utf8').then(
    (text) => JSON.parse(text) as Record<string, string>,
    (error: NodeJS.ErrnoException) => (error.code === 'ENOENT' ? {} : Promise.reject(error)),
  );
  const md5 = await fs.promises.readFile(store.getResourcePath(bucket, key, 'object.md5'), 'utf8').catch(async (error: NodeJS.ErrnoException) => {
    if (error.code !== 'ENOENT') throw error;
    return createHash('md5').update(await file.readFile()).digest('hex');
  });
  return { ...stored, etag: JSON.stringify(md5), 'last-modified': stat.mtime.toUTCString(), 'content-length': stat.size };
}

/** Streams the content into `file`, counting its bytes and MD5; resolves once the bytes are on disk. */
async function writeCounted(content: StoredObject['content'], file: string): Promise<{ size: number; md5: string }> {
  const hash = createHash('md5');
  let size = 0;
  const source = Buffer.isBuffer(content) ? Readable.from([content]) : (content ?? Readable.from([]));
  const count = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      size += chunk.length;
      done(null, chunk);
    },
  });
  await pipeline(source, count, fs.createWriteStream(file));
  return { size, md5: hash.digest('hex') };
}

async function writeAtomically(file: string, data: string): Promise<void> {
  const temporary = temporaryPath(file);
  try {
    await fs.promises.writeFile(temporary, data);
    await fs.promises.rename(temporary, file);
  } catch (error) {
    await fs.promises.unlink(temporary).catch(() => undefined);
    throw error;
  }
}

/** Beside the file (same filesystem, so the rename is atomic); never ends like an object's file, so listings skip it. */
function temporaryPath(file: string): string {
  return `${file}.${randomUUID()}.part`;
}

/** The folders between a file and its bucket's folder, innermost first (the bucket's own excluded). */
function foldersOf(file: string, bucketPath: string): string[] {
  const folders: string[] = [];
  for (let folder = path.dirname(file); folder.startsWith(bucketPath + path.sep); folder = path.dirname(folder)) folders.push(folder);
  return folders;
}
