import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { lookupUser } from './process.ts';

/**
 * What the database servers we start ourselves (Postgres, MariaDB) share: both refuse to run as root,
 * so as root they run as their system user, which must be able to reach their files and sockets.
 */
export interface RunAs {
  uid: number;
  gid: number;
  name: string;
  home: string;
}

export interface ServerIdentity {
  /** Shown in messages: `PostgreSQL`, `MariaDB`. */
  product: string;
  /** The unprivileged system account: `postgres`, `mysql`. */
  account: string;
  /** Debian package that creates the account. */
  packageName: string;
  /** The `useradd` options that create the account by hand. */
  useraddOptions: string;
  /** The environment variable naming a server to use instead. */
  urlVariable: string;
  /** A short name for folders and log lines: `postgres`, `mariadb`. */
  slug: string;
}

/** Undefined unless we are root; then the server's system user, or an error saying how to get one. */
export function runAsUser(server: ServerIdentity): RunAs | undefined {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return undefined;
  const user = lookupUser(server.account);
  if (!user || user.uid === 0) {
    throw new Error(
      `${server.product} refuses to run as root and there is no unprivileged \`${server.account}\` user to run it as. ` +
        `Install the server package, which creates it (\`apt-get install ${server.packageName}\`), or create one ` +
        `(\`useradd ${server.useraddOptions} ${server.account}\`), or set ${server.urlVariable}.`,
    );
  }
  return { ...user, name: server.account };
}

/** The unprivileged user must be able to reach the data and socket directories. */
export function ensureReachable(server: ServerIdentity, target: string, user: RunAs, stateDir: string): void {
  const stateStat = fs.statSync(stateDir);
  if ((stateStat.mode & 0o001) === 0 && stateStat.uid !== user.uid) {
    fs.chmodSync(stateDir, (stateStat.mode & 0o7777) | 0o001); // traverse only, no listing
  }
  let dir = path.dirname(path.resolve(target));
  for (;;) {
    const st = fs.statSync(dir);
    const ok =
      (st.uid === user.uid && (st.mode & 0o100) !== 0) ||
      (st.gid === user.gid && (st.mode & 0o010) !== 0) ||
      (st.mode & 0o001) !== 0;
    if (!ok) {
      throw new Error(
        `${server.product} runs as the unprivileged user "${user.name}", which cannot enter ${dir} ` +
          `(mode ${(st.mode & 0o777).toString(8)}). Choose a state directory it can reach, or run \`chmod o+x ${dir}\`.`,
      );
    }
    const parent = path.dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
}

/**
 * Where the server keeps its files: the state directory, or, when it runs as its system user and cannot
 * reach it (a clone under a private folder), a per-state-dir folder under the system temp dir.
 */
export function serverStateDir(server: ServerIdentity, stateDir: string, user: RunAs | undefined, log: (line: string) => void): string {
  if (!user) return stateDir;
  try {
    ensureReachable(server, path.join(stateDir, server.slug), user, stateDir);
    return stateDir;
  } catch (error) {
    const fallback = path.join(os.tmpdir(), `sigil-${server.slug}-${createHash('sha256').update(path.resolve(stateDir)).digest('hex').slice(0, 12)}`);
    fs.mkdirSync(path.join(fallback, 'logs'), { recursive: true, mode: 0o711 });
    fs.chmodSync(fallback, 0o711);
    log(`${server.slug}: ${(error as Error).message.split('.')[0]}; keeping its files in ${fallback}`);
    return fallback;
  }
}

/** The socket folder (`<stateDir>/<subdir>`, or a temp one when the path would pass the 107-byte limit), owned by the server's user. */
export function socketDirFor(stateDir: string, user: RunAs | undefined, subdir: string, longestSocketFile: string, tempPrefix: string): { dir: string; temporary: boolean } {
  let dir = path.join(stateDir, subdir);
  let temporary = false;
  if (Buffer.byteLength(path.join(dir, longestSocketFile)) > 100) {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), tempPrefix));
    temporary = true;
  } else {
    fs.mkdirSync(dir, { recursive: true });
  }
  if (user) {
    fs.chownSync(dir, user.uid, user.gid);
    fs.chmodSync(dir, 0o700);
  }
  return { dir, temporary };
}

export function safeReaddir(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}

/** A positive integer kept in a file (a pid, a port), or undefined. */
export function readNumber(file: string): number | undefined {
  try {
    const n = Number(fs.readFileSync(file, 'utf8').trim());
    return Number.isInteger(n) && n > 0 ? n : undefined;
  } catch {
    return undefined;
  }
}
