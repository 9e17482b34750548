import { randomInt } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Random base62 text from a CSPRNG (≈143 bits at 24 characters). */
export function randomBase62(length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += ALPHABET[randomInt(ALPHABET.length)];
  return out;
}

/** Public identifiers: `<prefix>_` followed by 24 base62 characters, e.g. `tpl_3fK...`. */
export function newId(prefix: string): string {
  return `${prefix}_${randomBase62(24)}`;
}
