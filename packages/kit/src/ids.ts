import { randomBase62 } from '@sigil/proto/random';

export { randomBase62 };

/** Public identifiers: `<prefix>_` followed by 24 base62 characters, e.g. `tpl_3fK...`. */
export function newId(prefix: string): string {
  return `${prefix}_${randomBase62(24)}`;
}
