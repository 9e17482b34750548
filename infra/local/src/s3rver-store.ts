import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

/**
 * s3rver's filesystem store removes the folders a deleted object leaves empty, up to the bucket, with an `await` between
 * looking and removing. An object written at the same moment under the same prefix (a backup's claims: one attempt
 * removing its claim while another renews its own) then loses its folder between `mkdirp` and opening its file, and
 * either request answers 500; CI saw bursts of them fail a lease's release and stall a renewal for the whole test.
 * This store keeps a count of the writes in flight under each folder and removes empty folders synchronously, never
 * one a write is using; a folder it cannot remove is left (an empty folder lists nothing). Loaded once per process.
 */
interface FilesystemStore {
  getBucketPath(bucket: string): string;
  getResourcePath(bucket: string, key: string, resource: string): string;
  putObject(object: { bucket: string; key: string }): Promise<unknown>;
  deleteObject(bucket: string, key: string): Promise<void>;
}

let installed = false;

export function installS3rverStoreFixes(): void {
  if (installed) return;
  installed = true;
  const require = createRequire(import.meta.url);
  const store = (require('s3rver/lib/stores/filesystem.js') as { prototype: FilesystemStore }).prototype;
  const writing = new Map<string, number>();
  const count = (folders: string[], by: 1 | -1) => {
    for (const folder of folders) {
      const n = (writing.get(folder) ?? 0) + by;
      if (n > 0) writing.set(folder, n);
      else writing.delete(folder);
    }
  };
  const putObject = store.putObject;
  store.putObject = async function (this: FilesystemStore, object) {
    const folders = foldersOf(this.getResourcePath(object.bucket, object.key, 'object'), this.getBucketPath(object.bucket));
    count(folders, 1);
    try {
      return await putObject.call(this, object);
    } finally {
      count(folders, -1);
    }
  };
  store.deleteObject = async function (this: FilesystemStore, bucket, key) {
    const files = ['object', 'object.md5', 'metadata.json'].map((resource) => this.getResourcePath(bucket, key, resource));
    await Promise.all(files.map((file) => fs.promises.unlink(file).catch((error: NodeJS.ErrnoException) => (error.code === 'ENOENT' ? undefined : Promise.reject(error)))));
    for (const folder of foldersOf(files[0]!, this.getBucketPath(bucket))) {
      if (writing.has(folder)) return;
      try {
        if (fs.readdirSync(folder).length > 0) return;
        fs.rmdirSync(folder);
      } catch {
        return;
      }
    }
  };
}

/** The folders between a file and its bucket's folder, innermost first (the bucket's own excluded). */
function foldersOf(file: string, bucketPath: string): string[] {
  const folders: string[] = [];
  for (let folder = path.dirname(file); folder.startsWith(bucketPath + path.sep); folder = path.dirname(folder)) folders.push(folder);
  return folders;
}
