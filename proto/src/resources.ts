import { RESOURCE_API_VERSION, RESOURCE_KINDS, isResourceKind, type ResourceKind } from './resources/kinds.ts';
import { describeAjvError, jsonValue, problem } from './resources/messages.ts';
import { CROSS_FIELD_RULES, obj } from './resources/rules.ts';
import { isPlainObject } from './resources/schemas.ts';
import type { AnyResource } from './resources/types.ts';
import { validatorFor, type ResourceValidation, type ResourceValidationError } from './resources/validator.ts';


/**
 * Strata's declarative resources (spec part 2.2): JSON Schemas (2020-12) under `proto/resources/`,
 * a validator that applies defaults and explains errors in plain English, and the parsers for the
 * duration and byte-quantity strings the resources use. The CRDs in `infra/k8s/crds/` are generated
 * from the same schemas by `proto/scripts/emit-crds.ts`. See docs/strata-resources.md.
 */

export { BYTE_QUANTITY_PATTERN, DURATION_PATTERN, formatDuration, parseDuration, parseQuantity } from './units.ts';
export * from './resources/kinds.ts';
export * from './resources/types.ts';
export { cronProblem, isCron5, isIanaTimeZone } from './resources/formats.ts';
export * from './resources/schemas.ts';
export { createResourceAjv, KUBERNETES_SCHEMA_KEYWORDS, type ResourceValidation, type ResourceValidationError } from './resources/validator.ts';
export { PATTERN_DESCRIPTIONS } from './resources/messages.ts';

function kindHint(kind: string): string {
  const match = RESOURCE_KINDS.find((k) => k.toLowerCase() === kind.toLowerCase());
  return match ? ` Did you mean ${match}?` : '';
}

/**
 * Validates one Strata resource document (already parsed from YAML or JSON). On success returns a
 * copy with every schema default applied and `metadata.namespace` filled with `default` when
 * missing; the input is never modified. On failure returns every problem found, each with a dotted
 * path and a sentence such as `spec.full.schedule: "* * *" is not a 5-field cron expression`.
 * A wrong `apiVersion` or an unknown `kind` is reported on its own.
 */
export function validateResource(doc: unknown): ResourceValidation {
  if (!isPlainObject(doc)) {
    return { ok: false, errors: [problem('', `a resource must be an object with apiVersion, kind, metadata and spec (got ${jsonValue(doc)})`)] };
  }
  const header: ResourceValidationError[] = [];
  if (doc.apiVersion === undefined) {
    header.push(problem('apiVersion', `is required (expected ${JSON.stringify(RESOURCE_API_VERSION)})`));
  } else if (doc.apiVersion !== RESOURCE_API_VERSION) {
    header.push(problem('apiVersion', `${jsonValue(doc.apiVersion)} is not supported; Strata resources use ${JSON.stringify(RESOURCE_API_VERSION)}`));
  }
  if (doc.kind === undefined) {
    header.push(problem('kind', `is required (one of ${RESOURCE_KINDS.join(', ')})`));
  } else if (!isResourceKind(doc.kind)) {
    const hint = typeof doc.kind === 'string' ? kindHint(doc.kind) : '';
    header.push(problem('kind', `${jsonValue(doc.kind)} is not a Strata resource kind (expected one of ${RESOURCE_KINDS.join(', ')}).${hint}`));
  }
  if (header.length > 0) return { ok: false, errors: header };

  const kind = doc.kind as ResourceKind;
  const copy = structuredClone(doc);
  const validate = validatorFor(kind);
  const valid = validate(copy);
  const errors: ResourceValidationError[] = [];
  const seen = new Set<string>();
  const add = (error: ResourceValidationError | undefined): void => {
    if (!error || seen.has(error.message)) return;
    seen.add(error.message);
    errors.push(error);
  };
  if (!valid) for (const error of validate.errors ?? []) add(describeAjvError(error, copy));
  const spec = obj(copy.spec);
  if (spec) for (const error of CROSS_FIELD_RULES[kind](spec)) add(error);
  if (errors.length > 0) return { ok: false, errors };
  return { ok: true, resource: copy as unknown as AnyResource };
}

/** Like validateResource, but throws an Error listing every problem. */
export function parseResource(doc: unknown): AnyResource {
  const result = validateResource(doc);
  if (result.ok) return result.resource;
  throw new Error(`invalid Strata resource:\n${result.errors.map((e) => `  ${e.message}`).join('\n')}`);
}
