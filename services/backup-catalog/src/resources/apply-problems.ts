import { AppError, type ErrorCode } from '@sigil/kit/errors';
import type { components } from '@sigil/proto/api/strata';

/** One problem of an apply as the answer's `errors` holds it: the document (1-based), its resource, the field. */
export type ResourceProblem = components['schemas']['ResourceProblem'];

/** A problem with the error code it would answer alone. */
export interface ApplyProblem extends ResourceProblem {
  code: ErrorCode;
}

/** The resource a document names, as far as it names one (`kind` '' and `name` '' when it does not). */
export type DocumentRef = Pick<ResourceProblem, 'document' | 'kind' | 'namespace' | 'name'>;

export function documentRef(doc: unknown, index: number): DocumentRef {
  const d = doc as { kind?: unknown; metadata?: { name?: unknown; namespace?: unknown } } | null;
  return {
    document: index + 1,
    kind: typeof d?.kind === 'string' ? d.kind : '',
    namespace: typeof d?.metadata?.namespace === 'string' ? d.metadata.namespace : 'default',
    name: typeof d?.metadata?.name === 'string' ? d.metadata.name : '',
  };
}

/** `BackupTarget default/orders`, `BackupTarget` (no name), `document 3` (no kind). */
export function describeRef(ref: DocumentRef): string {
  const kind = ref.kind || `document ${ref.document}`;
  return ref.name ? `${kind} ${ref.namespace}/${ref.name}` : kind;
}

/** A problem of `ref`; a message that starts with its path (as validateResource writes them) loses the prefix. */
export function problem(ref: DocumentRef, path: string, message: string, code: ErrorCode = 'validation-failed'): ApplyProblem {
  const text = path && message.startsWith(`${path}: `) ? message.slice(path.length + 2) : message;
  return { ...ref, path, message: text, code };
}

function line(p: ApplyProblem): string {
  return `${describeRef(p)}: ${p.path ? `${p.path}: ` : ''}${p.message}`;
}

/**
 * One error for every problem of an apply: the message lists them all, one per line, and the answer's `errors`
 * member holds them with their resource and field. The status is 400 when any problem is a validation failure.
 */
export function applyFailure(problems: ApplyProblem[]): AppError {
  const code = problems.some((p) => p.code === 'validation-failed') ? 'validation-failed' : (problems[0]?.code ?? 'validation-failed');
  const message = problems.length === 1 ? line(problems[0] as ApplyProblem) : `${problems.length} problems, nothing was applied:\n${problems.map((p) => `  ${line(p)}`).join('\n')}`;
  const errors: ResourceProblem[] = problems.map(({ code: _code, ...rest }) => rest);
  return new AppError(code, message, { extensions: { errors } });
}
