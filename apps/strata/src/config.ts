// The CLI's configuration file: `{ server, token }` (plus the token's expiry when known), mode 0600.
import { chmod, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

export interface StoredConfig {
  server?: string;
  token?: string;
  expiresAt?: string;
}

/** `$STRATA_CONFIG`, else `$XDG_CONFIG_HOME/strata/config.json`, else `~/.config/strata/config.json`. */
export function configPath(env: NodeJS.ProcessEnv): string {
  if (env.STRATA_CONFIG) return path.resolve(env.STRATA_CONFIG);
  const base = env.XDG_CONFIG_HOME || path.join(env.HOME || os.homedir(), '.config');
  return path.join(base, 'strata', 'config.json');
}

export async function readConfig(file: string): Promise<StoredConfig> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new Error(`cannot read config ${file}: ${(err as Error).message}`, { cause: err });
  }
  try {
    const parsed: unknown = JSON.parse(text);
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not a JSON object');
    const o = parsed as Record<string, unknown>;
    const out: StoredConfig = {};
    if (typeof o.server === 'string') out.server = o.server;
    if (typeof o.token === 'string') out.token = o.token;
    if (typeof o.expiresAt === 'string') out.expiresAt = o.expiresAt;
    return out;
  } catch (err) {
    throw new Error(`config ${file} is not valid: ${(err as Error).message}`, { cause: err });
  }
}

/** Writes the file atomically with mode 0600 (its directory 0700 when created). */
export async function writeConfig(file: string, config: StoredConfig): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
  try {
    await writeFile(tmp, JSON.stringify(config, null, 2) + '\n', { mode: 0o600 });
    await chmod(tmp, 0o600);
    await rename(tmp, file);
  } catch (err) {
    await rm(tmp, { force: true });
    throw new Error(`cannot write config ${file}: ${(err as Error).message}`, { cause: err });
  }
}

/** `https://x/` -> `https://x`; throws on anything that is not an http(s) URL. */
export function normalizeServer(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`invalid server URL "${raw}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`server URL must be http or https: "${raw}"`);
  if (url.search || url.hash) throw new Error(`server URL must not have a query or fragment: "${raw}"`);
  return url.toString().replace(/\/+$/, '');
}
