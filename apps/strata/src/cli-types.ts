/** The strata CLI: what a run is given, its exit codes and the enumerations of its options. */
import type { Readable, Writable } from 'node:stream';
import type { components } from '@sigil/proto/api/strata';
import pkg from '../package.json' with { type: 'json' };

export interface CliIo {
  stdout: Writable;
  stderr: Writable;
  env: NodeJS.ProcessEnv;
  stdin?: Readable;
  fetch?: typeof fetch;
  /** Aborting it stops whatever runs (Ctrl-C); runCli then returns 130. */
  signal?: AbortSignal;
}

/**
 * The values of a string union of the document at run time: the compiler rejects a list that misses one
 * (naming it) or has one too many.
 */
export function everyOf<Union extends string>() {
  return <const Values extends readonly Union[]>(values: Values & ([Union] extends [Values[number]] ? unknown : { missing: Exclude<Union, Values[number]> })): Values => values;
}

export const VERSION: string = pkg.version;
export const ROLES = everyOf<components['schemas']['Role']>()(['viewer', 'operator', 'restorer', 'restorer-admin']);
export const MODES = everyOf<components['schemas']['RestoreMode']>()(['new', 'download', 'sandbox', 'in-place']);
export const HEALTHS = everyOf<components['schemas']['Health']>()(['ok', 'never', 'failing', 'stale', 'suspended', 'misconfigured']);
export const OUTPUTS = ['text', 'json', 'yaml'] as const;
export const KINDS = everyOf<components['schemas']['ResourceKind']>()(['BackupStore', 'BackupPolicy', 'BackupTarget', 'Backup', 'Restore', 'Sandbox']);
export type Output = (typeof OUTPUTS)[number];

/** Wrong use of the command line: exit code 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export interface Globals {
  server?: string;
  output: Output;
}

export interface RunState {
  server?: string;
  hasToken: boolean;
}

/** Ends the run with a code after the command has printed what it had to say. */
export class ExitCode extends Error {
  readonly code: number;
  constructor(code: number) {
    super(`exit ${code}`);
    this.code = code;
  }
}
