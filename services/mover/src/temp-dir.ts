import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * Where the mover keeps its work files (WAL and binlog segments being streamed, segments fetched for a restore, a
 * recovery's data directory): one folder per process, `strata-mover-<pid>` under the configured base. A mover killed
 * with -9 never runs its `finally` blocks; the next mover on the host removes the folders of dead processes, and only
 * theirs (another replica's live folder stays). The folder may be a mount point (a volume of its own): it is emptied,
 * never removed, when this process finds it.
 */
const PREFIX = 'strata-mover-';

let base = os.tmpdir();
let root: string | undefined;

/** Sets the base folder (MOVER_TEMP_DIR) and removes the folders movers that died there left; answers what it removed. */
export function configureTempDir(dir: string): string[] {
  base = path.resolve(dir);
  root = undefined;
  fs.mkdirSync(base, { recursive: true });
  const removed: string[] = [];
  for (const entry of fs.readdirSync(base)) {
    const pid = Number(/^strata-mover-(\d+)$/.exec(entry)?.[1]);
    if (!pid || (pid !== process.pid && alive(pid))) continue;
    // Ours is left from an earlier process that had our pid: its content is stale, the folder is kept.
    const inside = pid === process.pid ? fs.readdirSync(path.join(base, entry)).map((name) => path.join(entry, name)) : [entry];
    for (const stale of inside) {
      try {
        fs.rmSync(path.join(base, stale), { recursive: true, force: true });
      } catch {
        // A mount point: emptied, and the folder itself stays.
      }
    }
    removed.push(...inside);
  }
  return removed;
}

/** A new empty folder for one job's work files, inside this process's own folder; the job removes it when done. */
export function jobTempDir(prefix: string): string {
  root ??= path.join(base, `${PREFIX}${process.pid}`);
  fs.mkdirSync(root, { recursive: true });
  return fs.mkdtempSync(path.join(root, prefix));
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
