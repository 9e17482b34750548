import type { Principal } from '@sigil/kit/auth';
import type { Prisma } from './generated/prisma/client.ts';

/** `1`/`true` of the contract's QueryFlag. */
export const flagSet = (value: unknown): boolean => value === true || value === '1' || value === 'true';

/**
 * The mode of what a caller creates: an API key's own mode always wins; a dashboard session creates live envelopes
 * unless it asks for `test_mode` (spec part 5, point 6).
 */
export function creationTestMode(principal: Principal, testModeFlag: unknown): boolean {
  return principal.kind === 'session' ? flagSet(testModeFlag) : principal.mode === 'test';
}

/**
 * Which envelopes a caller may see: an API key only those of its own mode (another mode's envelope is a 404); a
 * dashboard session those of the organization in both modes when it names one, and in lists the mode it asks for
 * (live by default).
 */
export function visibleTo(principal: Principal, listTestMode?: unknown): Prisma.EnvelopeWhereInput {
  const where: Prisma.EnvelopeWhereInput = { organizationId: principal.organizationId };
  if (principal.kind !== 'session') where.testMode = principal.mode === 'test';
  else if (listTestMode !== undefined) where.testMode = flagSet(listTestMode);
  return where;
}
