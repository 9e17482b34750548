import { execFile } from 'node:child_process';
import { mkdir, open, rm, statfs } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * A folder with a quota of its own: a small tmpfs mounted on it (a loop-mounted ext4 image where tmpfs cannot be
 * mounted). Mounting needs root, which the test machines and CI have; without it the suite says so and fails.
 */
export class SmallVolume {
  readonly dir: string;
  readonly megabytes: number;
  private readonly image: string;
  private mounted = false;

  /** `dir` is created (and removed after unmount); the loop device's image, when one is needed, lives in `scratch`. */
  constructor(dir: string, megabytes: number, scratch: string) {
    this.megabytes = megabytes;
    this.dir = dir;
    this.image = path.join(scratch, `${path.basename(dir)}.img`);
  }

  async mount(): Promise<string> {
    await mkdir(this.dir, { recursive: true });
    const tmpfs = await run('mount', ['-t', 'tmpfs', '-o', `size=${this.megabytes}m,mode=1777`, 'tmpfs', this.dir]).then(() => undefined, (error: Error) => error.message);
    if (tmpfs === undefined) {
      this.mounted = true;
      return 'tmpfs';
    }
    try {
      await run('truncate', ['-s', `${this.megabytes}M`, this.image]);
      await run('mkfs.ext4', ['-q', '-F', this.image]);
      await run('mount', ['-o', 'loop', this.image, this.dir]);
      await run('chmod', ['1777', this.dir]);
      this.mounted = true;
      return 'ext4 on a loop device';
    } catch (error) {
      throw new Error(`the mover's small temp volume needs root to mount (tmpfs: ${tmpfs}; loop device: ${(error as Error).message})`, { cause: error });
    }
  }

  /** Fills the volume with one file until fewer than `leaveBytes` are free; answers the file. */
  async fill(leaveBytes: number): Promise<string> {
    const file = path.join(this.dir, 'filler');
    const handle = await open(file, 'w');
    const chunk = Buffer.alloc(1024 * 1024, 0x5a);
    try {
      for (;;) {
        const free = await this.freeBytes();
        if (free <= leaveBytes) break;
        const written = await handle.write(chunk.subarray(0, Math.min(chunk.length, free - leaveBytes))).then(
          () => true,
          (error: NodeJS.ErrnoException) => {
            if (error.code === 'ENOSPC') return false; // the mover's writes took the rest meanwhile
            throw error;
          },
        );
        if (!written) break;
      }
    } finally {
      await handle.close();
    }
    return file;
  }

  async freeBytes(): Promise<number> {
    const stats = await statfs(this.dir);
    return stats.bavail * stats.bsize;
  }

  async unmount(): Promise<void> {
    if (this.mounted) await run('umount', ['-l', this.dir]).catch(() => undefined);
    this.mounted = false;
    await rm(this.image, { force: true });
    await rm(this.dir, { recursive: true, force: true });
  }
}
