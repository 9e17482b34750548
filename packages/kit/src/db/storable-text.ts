/**
 * Text PostgreSQL cannot store: U+0000 (NUL), which neither `text` nor `jsonb` holds, and an unpaired UTF-16 surrogate
 * (`"\ud800"` in a JSON body), which is not Unicode: `jsonb` refuses its escape and `text` gets U+FFFD in its place.
 */

/** Why PostgreSQL could not store `value`, or undefined. */
export function unstorableReason(value: string): string | undefined {
  if (value.includes('\u0000')) return 'must not contain the NUL character (U+0000)';
  if (!value.isWellFormed()) return 'must be well-formed Unicode (it holds an unpaired surrogate)';
  return undefined;
}

/**
 * A copy of a JSON-like value whose strings (member names too) PostgreSQL can store, NUL and unpaired surrogates
 * replaced by U+FFFD: for records of what a caller sent, which keep a refused request too.
 */
export function storableCopy<T>(value: T): T {
  if (typeof value === 'string') return value.replaceAll('\u0000', '\uFFFD').toWellFormed() as T;
  if (Array.isArray(value)) return value.map(storableCopy) as T;
  if (value !== null && typeof value === 'object' && !(value instanceof Date) && !Buffer.isBuffer(value)) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [storableCopy(key), storableCopy(item)])) as T;
  }
  return value;
}

/**
 * The first string or member name under `value` that PostgreSQL could not store: the path to it (member names and
 * array indexes) and why. Walked with a stack of its own, so a deeply nested body cannot overflow the call stack.
 */
export function findUnstorable(value: unknown): { path: Array<string | number>; reason: string } | undefined {
  const pending: Array<[Array<string | number>, unknown]> = [[[], value]];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [path, item] = next;
    if (typeof item === 'string') {
      const reason = unstorableReason(item);
      if (reason) return { path, reason };
    } else if (Array.isArray(item)) {
      item.forEach((element, index) => pending.push([[...path, index], element]));
    } else if (item !== null && typeof item === 'object' && !Buffer.isBuffer(item)) {
      for (const [key, member] of Object.entries(item)) {
        const reason = unstorableReason(key);
        if (reason) return { path: [...path, key], reason };
        pending.push([[...path, key], member]);
      }
    }
  }
  return undefined;
}
