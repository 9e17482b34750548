import { describe, expect, it } from 'vitest';
import { hashPassword, needsRehash, verifyPassword, generatePassword } from '../src/passwords.ts';

describe('passwords (argon2id)', () => {
  it('hashes to a PHC string with a fresh salt and verifies', async () => {
    const a = await hashPassword('correct horse battery staple');
    const b = await hashPassword('correct horse battery staple');
    expect(a).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
    expect(a).not.toBe(b);
    expect(await verifyPassword('correct horse battery staple', a)).toBe(true);
    expect(await verifyPassword('correct horse battery stapl', a)).toBe(false);
    expect(await verifyPassword('', a)).toBe(false);
  });

  it('reads the parameters back from the stored hash and flags weaker ones for rehashing', async () => {
    // Same password, salt and parameters must give the same tag; a different parameter changes it.
    const hash = await hashPassword('pw', { memory: 8192, passes: 1, parallelism: 1 });
    expect(hash.startsWith('$argon2id$v=19$m=8192,t=1,p=1$')).toBe(true);
    expect(await verifyPassword('pw', hash)).toBe(true);
    expect(await verifyPassword('pw', hash.replace('t=1', 't=2'))).toBe(false);
    expect(needsRehash(hash)).toBe(true);
    expect(needsRehash(await hashPassword('pw'))).toBe(false);
  });

  it('does the full work and says false for a missing or malformed hash', async () => {
    const started = performance.now();
    expect(await verifyPassword('anything', undefined)).toBe(false);
    expect(await verifyPassword('anything', 'not-a-hash')).toBe(false);
    expect(performance.now() - started).toBeGreaterThan(5);
  });

  it('generates long random passwords', () => {
    expect(generatePassword()).toMatch(/^[A-Za-z0-9_-]{24}$/);
    expect(generatePassword()).not.toBe(generatePassword());
  });
});
