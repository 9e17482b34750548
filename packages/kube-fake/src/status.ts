/**
 * The API server's error answers: `metav1.Status` objects built the way k8s.io/apimachinery/pkg/api/errors builds
 * them (the same messages, reasons, details and key order), thrown as `ApiError` and written as the response body.
 */
import type { ResourceType } from './resources.ts';

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  causes?: Array<{ reason: string; message: string; field: string }>;
}

export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure' | 'Success';
  message?: string;
  reason?: string;
  details?: StatusDetails;
  code: number;
}

export class ApiError extends Error {
  readonly status: Status;
  constructor(status: Status) {
    super(status.message);
    this.status = status;
  }
  get code(): number {
    return this.status.code;
  }
}

export function failure(code: number, reason: string, message: string, details?: StatusDetails): ApiError {
  return new ApiError({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, ...(details ? { details } : {}), code });
}

/** `pods`, or `leases.coordination.k8s.io`: how errors name a resource (schema.GroupResource.String()). */
function qualified(type: ResourceType): string {
  return type.group ? `${type.plural}.${type.group}` : type.plural;
}

function resourceDetails(type: ResourceType, name: string): StatusDetails {
  return { name, ...(type.group ? { group: type.group } : {}), kind: type.plural };
}

export const notFound = (type: ResourceType, name: string) => failure(404, 'NotFound', `${qualified(type)} "${name}" not found`, resourceDetails(type, name));

export const alreadyExists = (type: ResourceType, name: string) =>
  failure(409, 'AlreadyExists', `${qualified(type)} "${name}" already exists`, resourceDetails(type, name));

/** storage.OptimisticLockErrorMsg, wrapped by errors.NewConflict. */
export const OPTIMISTIC_LOCK_MESSAGE = 'the object has been modified; please apply your changes to the latest version and try again';

export const conflict = (type: ResourceType, name: string, why = OPTIMISTIC_LOCK_MESSAGE) =>
  failure(409, 'Conflict', `Operation cannot be fulfilled on ${qualified(type)} "${name}": ${why}`, resourceDetails(type, name));

/**
 * errors.NewInvalid: named by the kind (`Pod`, `BackupTarget.backups.strata.dev`), one cause per field error. The
 * generic store's "resourceVersion must be specified" names the resource in the kind's place (`byResource`).
 */
export function invalid(type: ResourceType, name: string, causes: Array<{ field: string; reason: string; detail: string }>, byResource = false): ApiError {
  const kindName = byResource ? type.plural : type.kind;
  const kind = type.group ? `${kindName}.${type.group}` : kindName;
  const messages = causes.map((c) => `${c.field}: ${c.detail}`);
  const message = `${kind} "${name}" is invalid: ${messages.length === 1 ? messages[0] : `[${messages.join(', ')}]`}`;
  return failure(422, 'Invalid', message, {
    name,
    ...(type.group ? { group: type.group } : {}),
    kind: kindName,
    causes: causes.map((c, i) => ({ reason: c.reason, message: messages[i]!.slice(c.field.length + 2), field: c.field })),
  });
}

/** What a deletion answers when the store does not return the deleted object (secrets, config maps, leases). */
export function deleted(type: ResourceType, name: string, uid: string | undefined) {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: { name, ...(type.group ? { group: type.group } : {}), kind: type.plural, ...(uid ? { uid } : {}) } };
}

export const badRequest = (message: string) => failure(400, 'BadRequest', message);

/** The watch cache's answer for a resourceVersion older than the oldest it keeps. */
export const expired = (requested: number, oldest: number) => failure(410, 'Expired', `too old resource version: ${requested} (${oldest})`);

export const pathNotFound = () => failure(404, 'NotFound', 'the server could not find the requested resource', {});

export const methodNotAllowed = (_method: string) => failure(405, 'MethodNotAllowed', `the server does not allow this method on the requested resource`, {});

export const unauthorized = () => failure(401, 'Unauthorized', 'Unauthorized');

export const toError = (error: unknown): ApiError => (error instanceof ApiError ? error : failure(500, 'InternalError', `Internal error occurred: ${String(error)}`, {}));

