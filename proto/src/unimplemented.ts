/**
 * Operations of the contracts that no service handles yet. Their owner answers 501 `not-implemented` naming the
 * operation, and so does the gateway when it has no address for the owner; a service
 * that is down stays a 503. `test/contract/unimplemented.test.ts` keeps each list exact, read from the services'
 * sources: a new handler takes its operation off, and a new operation of a contract comes with its handler, so the
 * lists only shrink.
 */
export const NOT_IMPLEMENTED = {
  sigil: [
    // accounts (one per line: each comes off with its handler)
  ],
  strata: [
    // backup-catalog (one per line: each comes off with its handler)
  ],
} as const satisfies Record<'sigil' | 'strata', readonly string[]>;

const notImplemented: ReadonlySet<string> = new Set([...NOT_IMPLEMENTED.sigil, ...NOT_IMPLEMENTED.strata]);

/** Whether no service handles this operation yet (the operationIds of the two contracts are distinct). */
export function isNotImplemented(operationId: string): boolean {
  return notImplemented.has(operationId);
}
