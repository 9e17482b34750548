/** SCIM's error answers (RFC 7644 §3.12): `urn:ietf:params:scim:api:messages:2.0:Error` with `status` and `scimType`. */
import SCIMMY from 'scimmy';
import { AppError } from '@sigil/kit/errors';

export const SCIM_CONTENT_TYPE = 'application/scim+json';

export type ScimType = 'invalidFilter' | 'tooMany' | 'uniqueness' | 'mutability' | 'invalidSyntax' | 'invalidPath' | 'noTarget' | 'invalidValue' | 'invalidVers' | 'sensitive';

export function scimError(status: number, scimType: ScimType | null, detail: string): InstanceType<typeof SCIMMY.Types.Error> {
  return new SCIMMY.Types.Error(status, scimType as string, detail);
}

/** SCIMMY turns any error that is not its own into a 404 "not found": every refusal of ours is made a SCIM error. */
export function asScimError(error: unknown): InstanceType<typeof SCIMMY.Types.Error> {
  if (error instanceof SCIMMY.Types.Error) return error;
  if (error instanceof AppError) {
    const scimType: ScimType | null = error.status === 409 ? 'uniqueness' : error.status === 400 ? 'invalidValue' : null;
    return scimError(error.status, scimType, error.message);
  }
  const failure = scimError(500, null, 'The request could not be completed; try again.');
  (failure as Error).cause = error;
  return failure;
}

/** The body of a SCIM error answer. */
export function scimErrorBody(status: number, scimType: ScimType | null, detail: string): Record<string, unknown> {
  return { schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'], status: String(status), ...(scimType ? { scimType } : {}), detail };
}
