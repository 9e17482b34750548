/** The strata CLI: what a run is given, its exit codes and the enumerations of its options. */
import type { Readable, Writable } from 'node:stream';
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

export const VERSION: string = pkg.version;
export const ROLES = ['viewer', 'operator', 'restorer', 'restorer-admin'] as const;
export const MODES = ['new', 'download', 'sandbox', 'in-place'] as const;
export const OUTPUTS = ['text', 'json', 'yaml'] as const;
/** The ResourceKind enum of the API. */
export const KINDS = ['BackupStore', 'BackupPolicy', 'BackupTarget', 'Backup', 'Restore', 'Sandbox'] as const;
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
