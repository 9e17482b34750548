/** The strata CLI: argument parsing and the request bodies built from options. */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { InvalidArgumentError } from 'commander';
import YAML from 'yaml';
import type { Schema } from '@strata/client';
import { isDuration, isTimestamp } from './format.ts';
import type { CliIo, MODES } from './cli-types.ts';
import { KINDS, UsageError } from './cli-types.ts';

// Argument helpers

export interface Ref {
  namespace: string;
  name: string;
}

/** `ns/name`, or a bare `name` meaning namespace `default`. */
export function parseRef(s: string, what = 'NS/NAME'): Ref {
  const parts = s.split('/');
  if (parts.length === 1 && parts[0]) return { namespace: 'default', name: parts[0] };
  if (parts.length === 2 && parts[0] && parts[1]) return { namespace: parts[0], name: parts[1] };
  throw new UsageError(`invalid ${what} "${s}": expected NAMESPACE/NAME or NAME`);
}

/** `backuptarget`, `BackupTargets`, ... -> `BackupTarget`. */
export function parseKind(s: string): Schema<'ResourceKind'> {
  const k = s.toLowerCase();
  const found = KINDS.find((kind) => kind.toLowerCase() === k || `${kind.toLowerCase()}s` === k);
  if (!found) throw new UsageError(`unknown kind "${s}": expected one of ${KINDS.join(', ')}`);
  return found;
}

/** The `{ns}/{name}` path parameters of an operation. */
export function refParams(r: Ref): { ns: string; name: string } {
  return { ns: r.namespace, name: r.name };
}

export function intArg(min: number, max: number) {
  return (value: string): number => {
    if (!/^\d+$/.test(value)) throw new InvalidArgumentError(`expected an integer from ${min} to ${max}.`);
    const n = Number(value);
    if (n < min || n > max) throw new InvalidArgumentError(`expected an integer from ${min} to ${max}.`);
    return n;
  };
}

export function durationArg(value: string): string {
  if (!isDuration(value)) throw new InvalidArgumentError('expected a duration such as 30m, 4h, 1h30m or 7d.');
  return value;
}

export function collect(value: string, previous: string[]): string[] {
  return previous.concat(value);
}

/** `key=value` -> [key, value]; the value may contain `=`. */
export function parsePair(s: string, what = 'key=value'): [string, string] {
  const i = s.indexOf('=');
  if (i <= 0) throw new UsageError(`invalid ${what} "${s}": expected KEY=VALUE`);
  return [s.slice(0, i), s.slice(i + 1)];
}

export async function readStdin(io: CliIo, stdinUse: { used: boolean }): Promise<string> {
  if (!io.stdin) throw new UsageError('standard input is not available');
  if (stdinUse.used) throw new UsageError('standard input ("-") can be read only once');
  stdinUse.used = true;
  const chunks: Buffer[] = [];
  for await (const chunk of io.stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

export async function readInput(file: string, io: CliIo, stdinUse: { used: boolean }): Promise<string> {
  if (file === '-') return readStdin(io, stdinUse);
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    throw new Error(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, { cause: err });
  }
}

export interface RestoreOptions {
  mode: (typeof MODES)[number];
  backup?: string;
  at?: string;
  host?: string;
  port?: number;
  database?: string;
  credentialsSecret?: string;
  tables?: string;
  ttl?: string;
  expose?: boolean;
  confirm?: string;
  skipSafetyBackup?: boolean;
  reason?: string;
  checks?: string;
  /** Turns off the checks an in-place restore runs by default. */
  skipChecks?: boolean;
  watch?: boolean;
  timeout: string;
}

/** The RestoreRequest of `strata restore`: only the fields given on the command line. */
export function buildRestoreRequest(target: Ref, o: Omit<RestoreOptions, 'timeout'>): Schema<'RestoreRequest'> {
  if (o.backup && o.at) throw new UsageError('pass either --backup or --at, not both');
  if (o.at && o.at !== 'latest' && !isTimestamp(o.at)) {
    throw new UsageError(`invalid --at "${o.at}": expected an RFC 3339 time or "latest"`);
  }
  if (o.mode === 'in-place') {
    if (!o.confirm) throw new UsageError(`an in-place restore overwrites ${target.name}: pass --confirm ${target.name}`);
    if (o.confirm !== target.name) throw new UsageError(`--confirm must equal the target name "${target.name}"`);
  }
  const req: Schema<'RestoreRequest'> = { target: `${target.namespace}/${target.name}` };
  if (o.backup) req.backupID = o.backup;
  if (o.at) req.at = o.at;
  req.mode = o.mode;
  if (o.host) req.host = o.host;
  if (o.port !== undefined) req.port = o.port;
  if (o.database) req.database = o.database;
  if (o.credentialsSecret) req.credentialsSecret = o.credentialsSecret;
  if (o.tables !== undefined) {
    const tables = o.tables.split(',').map((t) => t.trim()).filter(Boolean);
    if (!tables.length) throw new UsageError('--tables needs at least one table name');
    req.tables = tables;
  }
  if (o.ttl) req.ttl = o.ttl;
  if (o.expose) req.expose = true;
  if (o.confirm) req.confirm = o.confirm;
  if (o.skipSafetyBackup) req.skipSafetyBackup = true;
  if (o.reason) req.reason = o.reason;
  if (o.checks !== undefined) {
    const checks = o.checks.split(',').map((c) => c.trim()).filter(Boolean);
    if (!checks.length) throw new UsageError('--checks needs at least one check name');
    req.checks = checks;
  }
  if (o.skipChecks) req.runChecks = false;
  return req;
}

export function reasonBody(reason: string | undefined): Schema<'ReasonRequest'> {
  return reason ? { reason } : {};
}

export function linkedController(signal: AbortSignal | undefined): AbortController {
  const c = new AbortController();
  if (signal) {
    if (signal.aborted) c.abort();
    else signal.addEventListener('abort', () => c.abort(), { once: true });
  }
  return c;
}

/** Checks that a file parses (so a typo is reported with its line) and picks its content type. */
export function checkDocument(file: string, body: string): string {
  if (!body.trim()) throw new Error(`${file}: the file is empty`);
  const ext = path.extname(file).toLowerCase();
  const looksJson = ext === '.json' || (ext !== '.yaml' && ext !== '.yml' && /^\s*[[{]/.test(body));
  if (looksJson) {
    try {
      JSON.parse(body);
      return 'application/json';
    } catch (e) {
      if (ext === '.json') throw new Error(`${file}: invalid JSON: ${(e as Error).message}`, { cause: e });
    }
  }
  for (const doc of YAML.parseAllDocuments(body)) {
    const first = doc.errors[0];
    if (first) throw new Error(`${file}: invalid YAML: ${first.message.split('\n')[0]}`);
  }
  return 'application/yaml';
}
