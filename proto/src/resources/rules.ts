import { parseDuration } from '../units.ts';
import type { ResourceKind } from './kinds.ts';
import { jsonValue, problem } from './messages.ts';
import { isPlainObject } from './schemas.ts';
import type { ResourceValidationError } from './validator.ts';

// Cross-field rules. Each mirrors an `x-kubernetes-validations` rule in the schema (so the API server
// enforces it too) or, where CEL cannot express it (durations with d and w), exists only here.

type Doc = Record<string, unknown>;

export function obj(value: unknown): Doc | undefined {
  return isPlainObject(value) ? value : undefined;
}

function nonEmptyList(value: unknown): boolean {
  return Array.isArray(value) && value.length > 0;
}

function safeDuration(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  try {
    return parseDuration(value);
  } catch {
    return undefined;
  }
}

function duplicateNames(list: unknown, path: string, what: string): ResourceValidationError[] {
  if (!Array.isArray(list)) return [];
  const seen = new Set<string>();
  const errors: ResourceValidationError[] = [];
  list.forEach((item, index) => {
    const name = obj(item)?.name;
    if (typeof name !== 'string') return;
    if (seen.has(name)) errors.push(problem(`${path}[${index}].name`, `${JSON.stringify(name)} is already used by another ${what}`));
    seen.add(name);
  });
  return errors;
}

export const CROSS_FIELD_RULES: Record<ResourceKind, (spec: Doc) => ResourceValidationError[]> = {
  BackupStore: () => [],
  BackupPolicy: (spec) => {
    const sandbox = obj(spec.sandbox);
    const defaultTTL = safeDuration(sandbox?.defaultTTL);
    const maxTTL = safeDuration(sandbox?.maxTTL);
    if (defaultTTL !== undefined && maxTTL !== undefined && defaultTTL > maxTTL) {
      return [problem('spec.sandbox.defaultTTL', `must not be longer than maxTTL (${String(sandbox?.maxTTL)})`)];
    }
    return [];
  },
  BackupTarget: (spec) => {
    const errors: ResourceValidationError[] = [];
    const scope = obj(spec.scope);
    const previews = obj(spec.previews);
    if (spec.engine === 'mysql' && scope?.mode === 'physical') {
      errors.push(problem('spec.scope.mode', 'mysql backups are always logical; "physical" is not allowed'));
    }
    if (spec.engine !== 'postgres' && previews?.logical === true) {
      errors.push(problem('spec.previews.logical', `is for postgres targets only (engine is ${jsonValue(spec.engine)})`));
    }
    if (scope?.mode === 'physical') {
      for (const field of ['excludeData', 'excludeTables'] as const) {
        if (nonEmptyList(scope[field])) errors.push(problem(`spec.scope.${field}`, 'applies to logical backups only, but scope.mode is "physical"'));
      }
    }
    errors.push(...duplicateNames(spec.checks, 'spec.checks', 'check'));
    errors.push(...duplicateNames(scope?.queries, 'spec.scope.queries', 'query'));
    return errors;
  },
  Backup: () => [],
  Restore: (spec) => {
    const errors: ResourceValidationError[] = [];
    const source = obj(spec.source);
    if (source) {
      const latest = source.latest === true;
      if (source.backupID === undefined && source.time === undefined && !latest) {
        errors.push(problem('spec.source', 'must set backupID, time or latest: true'));
      }
      if (latest && source.time !== undefined) errors.push(problem('spec.source.time', 'cannot be combined with latest: true'));
    }
    const destination = obj(spec.destination);
    if (destination && typeof destination.mode === 'string') {
      const mode = destination.mode;
      const subObjects = [
        ['sandbox', 'sandbox'],
        ['new', 'new'],
        ['inPlace', 'in-place'],
      ] as const;
      for (const [field, fieldMode] of subObjects) {
        if (field !== 'sandbox' && mode === fieldMode && destination[field] === undefined) {
          errors.push(problem(`spec.destination.${field}`, `is required when mode is "${fieldMode}"`));
        }
        if (destination[field] !== undefined && mode !== fieldMode) {
          errors.push(problem(`spec.destination.${field}`, `is only allowed when mode is "${fieldMode}" (mode is ${jsonValue(mode)})`));
        }
      }
      const confirm = obj(destination.inPlace)?.confirm;
      if (typeof confirm === 'string' && typeof spec.target === 'string' && confirm !== spec.target) {
        errors.push(problem('spec.destination.inPlace.confirm', `must equal the target name ${JSON.stringify(spec.target)} (got ${JSON.stringify(confirm)})`));
      }
    }
    return errors;
  },
  Sandbox: (spec) => {
    const errors: ResourceValidationError[] = [];
    if (spec.physical === true && spec.engine !== 'postgres') {
      errors.push(problem('spec.physical', `is for postgres sandboxes only (engine is ${jsonValue(spec.engine)})`));
    }
    if (spec.major !== undefined && spec.engine !== 'postgres') {
      errors.push(problem('spec.major', `is for postgres sandboxes only (engine is ${jsonValue(spec.engine)})`));
    }
    return errors;
  },
};
