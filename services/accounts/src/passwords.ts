import { argon2, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Password hashing with argon2id from `node:crypto` (memory-hard, no native addon), stored as a PHC string:
 * `$argon2id$v=19$m=19456,t=2,p=1$<salt>$<tag>` (unpadded base64), the format every argon2 library reads.
 * Parameters follow OWASP's minimum recommendation for argon2id (19 MiB, 2 passes, 1 lane).
 */
export interface Argon2Parameters {
  /** KiB */
  memory: number;
  passes: number;
  parallelism: number;
}

export const PASSWORD_PARAMETERS: Argon2Parameters = { memory: 19456, passes: 2, parallelism: 1 };
const SALT_BYTES = 16;
const TAG_BYTES = 32;
const VERSION = 19;
/** Longer inputs only cost CPU; no real password is longer. */
export const MAX_PASSWORD_LENGTH = 1024;

function derive(password: string, salt: Buffer, params: Argon2Parameters, tagLength: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    argon2(
      'argon2id',
      { message: password, nonce: salt, memory: params.memory, passes: params.passes, parallelism: params.parallelism, tagLength },
      (error, key) => (error ? reject(error) : resolve(key)),
    );
  });
}


function formatPhc(params: Argon2Parameters, salt: Buffer, tag: Buffer): string {
  const b64 = (b: Buffer) => b.toString('base64').replace(/=+$/, '');
  return `$argon2id$v=${VERSION}$m=${params.memory},t=${params.passes},p=${params.parallelism}$${b64(salt)}$${b64(tag)}`;
}

interface ParsedHash {
  params: Argon2Parameters;
  salt: Buffer;
  tag: Buffer;
}

const PHC = /^\$argon2id\$v=19\$m=(\d{1,7}),t=(\d{1,3}),p=(\d{1,3})\$([A-Za-z0-9+/]{11,})\$([A-Za-z0-9+/]{22,})$/;

function parsePhc(encoded: string): ParsedHash | undefined {
  const match = PHC.exec(encoded);
  if (!match) return undefined;
  const [, m, t, p, salt, tag] = match as unknown as [string, string, string, string, string, string];
  return {
    params: { memory: Number(m), passes: Number(t), parallelism: Number(p) },
    salt: Buffer.from(salt, 'base64'),
    tag: Buffer.from(tag, 'base64'),
  };
}

/** How passwords are hashed and checked; injected so tests use cheap parameters and production keeps OWASP's. */
export interface PasswordHasher {
  hash(password: string): Promise<string>;
  /**
   * Constant-time check of `password` against a stored PHC string. Pass `undefined` when the account does not exist:
   * the full argon2 work is still done (against a dummy hash) and the answer is false.
   */
  verify(password: string, encoded: string | undefined | null): Promise<boolean>;
  /** Whether a stored hash uses weaker parameters than this hasher's and should be replaced at the next sign-in. */
  needsRehash(encoded: string): boolean;
}

export type Derive = (password: string, salt: Buffer, params: Argon2Parameters, tagLength: number) => Promise<Buffer>;

export function createPasswordHasher(params: Argon2Parameters = PASSWORD_PARAMETERS, deriveKey: Derive = derive): PasswordHasher {
  let dummyHash: ParsedHash | undefined;
  const hash = async (password: string) => {
    const salt = randomBytes(SALT_BYTES);
    return formatPhc(params, salt, await deriveKey(password.slice(0, MAX_PASSWORD_LENGTH), salt, params, TAG_BYTES));
  };
  return {
    hash,
    async verify(password, encoded) {
      const parsed = encoded ? parsePhc(encoded) : undefined;
      dummyHash ??= parsePhc(await hash(randomBytes(16).toString('hex')));
      const target = parsed ?? (dummyHash as ParsedHash);
      const candidate = await deriveKey(password.slice(0, MAX_PASSWORD_LENGTH), target.salt, target.params, target.tag.length);
      const same = candidate.length === target.tag.length && timingSafeEqual(candidate, target.tag);
      return same && parsed !== undefined;
    },
    needsRehash: (encoded) => needsRehash(encoded, params),
  };
}

/** Whether a stored hash uses weaker parameters than `params`. */
export function needsRehash(encoded: string, params: Argon2Parameters = PASSWORD_PARAMETERS): boolean {
  const parsed = parsePhc(encoded);
  if (!parsed) return true;
  return parsed.params.memory < params.memory || parsed.params.passes < params.passes;
}

/** A random password for accounts created from the command line (≈143 bits). */
export function generatePassword(): string {
  return randomBytes(18).toString('base64url');
}
