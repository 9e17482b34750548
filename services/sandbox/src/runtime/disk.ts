import fs from 'node:fs/promises';
import path from 'node:path';

/** Bytes allocated under `dir` (what `du` counts: blocks, not apparent sizes), without following links. */
export async function directorySize(dir: string): Promise<number> {
  let total = 0;
  const pending = [dir];
  while (pending.length) {
    const current = pending.pop() as string;
    let entries;
    try {
      entries = await fs.readdir(current, { withFileTypes: true });
    } catch {
      continue; // removed while we walked
    }
    for (const entry of entries) {
      const full = path.join(current, entry.name);
      if (entry.isDirectory()) pending.push(full);
      else if (entry.isFile()) {
        const stat = await fs.lstat(full).catch(() => undefined);
        if (stat) total += stat.blocks * 512;
      }
    }
  }
  return total;
}
