import { describe, expect, it } from 'vitest';
import { createPasswordHasher, generatePassword, needsRehash, PASSWORD_PARAMETERS, type Derive } from '../src/passwords.ts';

const cheap = { memory: 64, passes: 1, parallelism: 1 };

describe('passwords (argon2id)', () => {
  it('use OWASP minimum parameters in production: 19 MiB, 2 passes, 1 lane', () => {
    expect(PASSWORD_PARAMETERS).toEqual({ memory: 19456, passes: 2, parallelism: 1 });
  });

  it('hash to a PHC string with a fresh salt and the hasher parameters, and verify', async () => {
    const production = createPasswordHasher();
    const a = await production.hash('correct horse battery staple');
    expect(a).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
    const passwords = createPasswordHasher(cheap);
    const b = await passwords.hash('correct horse battery staple');
    const c = await passwords.hash('correct horse battery staple');
    expect(b).toMatch(/^\$argon2id\$v=19\$m=64,t=1,p=1\$/);
    expect(b).not.toBe(c);
    expect(await passwords.verify('correct horse battery staple', b)).toBe(true);
    expect(await passwords.verify('correct horse battery stapl', b)).toBe(false);
    expect(await passwords.verify('', b)).toBe(false);
    // Any hasher verifies any stored hash: the parameters are read back from it.
    expect(await passwords.verify('correct horse battery staple', a)).toBe(true);
  });

  it('read the parameters back from the stored hash and flag weaker ones for rehashing', async () => {
    const passwords = createPasswordHasher(cheap);
    const hash = await passwords.hash('pw');
    expect(await passwords.verify('pw', hash.replace('t=1', 't=2'))).toBe(false);
    expect(needsRehash(hash)).toBe(true);
    expect(passwords.needsRehash(hash)).toBe(false);
    expect(needsRehash('not-a-hash')).toBe(true);
  });

  it('do the full work (a dummy hash) and say false for a missing or malformed hash', async () => {
    const calls: number[] = [];
    const counting: Derive = async (_password, _salt, params, tagLength) => {
      calls.push(params.memory);
      return Buffer.alloc(tagLength, 1);
    };
    const passwords = createPasswordHasher(cheap, counting);
    expect(await passwords.verify('anything', undefined)).toBe(false);
    expect(await passwords.verify('anything', 'not-a-hash')).toBe(false);
    // One derivation for the dummy hash, then one per check: a missing account costs what a wrong password costs.
    expect(calls).toEqual([64, 64, 64]);
  });

  it('generates long random passwords', () => {
    expect(generatePassword()).toMatch(/^[A-Za-z0-9_-]{24}$/);
    expect(generatePassword()).not.toBe(generatePassword());
  });
});
