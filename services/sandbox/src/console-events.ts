import type { StrataConsoleEvent } from '@sigil/proto/strata-jobs';
import type { SandboxRow } from './db.ts';

/** Sends an event on the console's subject (`strataConsoleSubject`): open pages read the sandbox again. */
export type TellConsole = (event: StrataConsoleEvent) => void;

/**
 * A sandbox changed in a way an open page shows (its phase, its expiry): the console's lists and the sandbox's own
 * page read it again. The event carries no more than the page needs to know which sandbox; the page reads the rest.
 */
export function sandboxChanged(tell: TellConsole | undefined, row: Pick<SandboxRow, 'namespace' | 'name'>, phase: string, message: string, at: Date): void {
  tell?.({ kind: 'sandbox', namespace: row.namespace, name: row.name, phase, stage: '', message, bytes: 0, version: at.getTime() });
}
