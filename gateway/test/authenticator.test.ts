import { describe, expect, it } from 'vitest';
import { silentLogger } from '@sigil/kit/testing';
import { API_KEY_PATTERN, createAuthenticator, sha256Hex, type AuthenticatorOptions } from '../src/authenticator.ts';
import type { AuthenticateRequest, AuthenticateResponse } from '@sigil/proto/internal-auth';
import { apiKeyPrincipal, createTestKeys, newApiKey, sessionPrincipal, waitFor } from './helpers.ts';

/** An accounts endpoint in a function: records calls, answers from `answer`, optionally waits on a gate. */
function fakeFetch(answer: (body: AuthenticateRequest) => AuthenticateResponse | number) {
  const calls: AuthenticateRequest[] = [];
  let gate: Promise<void> | undefined;
  const impl = (async (_url: string, init: RequestInit) => {
    const body = JSON.parse(String(init.body)) as AuthenticateRequest;
    calls.push(body);
    if (gate) await gate;
    const result = answer(body);
    return typeof result === 'number' ? new Response('nope', { status: result }) : Response.json(result);
  }) as unknown as typeof fetch;
  return {
    calls,
    impl,
    hold() {
      let release!: () => void;
      gate = new Promise<void>((resolve) => (release = resolve));
      return () => {
        gate = undefined;
        release();
      };
    },
  };
}

async function authenticatorWith(fetchImpl: typeof fetch, options: Partial<AuthenticatorOptions> = {}) {
  const keys = await createTestKeys();
  return createAuthenticator({ accountsUrl: 'http://accounts.test', signPrincipal: keys.sign, log: silentLogger(), fetch: fetchImpl, ...options });
}

describe('authenticator', () => {
  it('recognises the key shape', () => {
    expect(API_KEY_PATTERN.test(newApiKey('live'))).toBe(true);
    expect(API_KEY_PATTERN.test(newApiKey('test'))).toBe(true);
    for (const bad of ['sgl_live_' + 'a'.repeat(31), 'sgl_live_' + 'a'.repeat(33), 'sgl_prod_' + 'a'.repeat(32), 'sgl_live_' + 'a'.repeat(31) + '-', ` ${newApiKey()}`]) {
      expect(API_KEY_PATTERN.test(bad), bad).toBe(false);
    }
  });

  it('sends only the SHA-256 of the credential', async () => {
    const principal = apiKeyPrincipal();
    const accounts = fakeFetch(() => ({ principal, expiresAt: null }));
    const auth = await authenticatorWith(accounts.impl);
    const key = newApiKey();
    expect((await auth.resolveApiKey(key)).principal).toEqual(principal);
    await auth.resolveSession('session-token-value');
    expect(accounts.calls).toEqual([
      { type: 'api_key', secretHash: sha256Hex(key) },
      { type: 'session', tokenHash: sha256Hex('session-token-value') },
    ]);
  });

  it('never lets a look-up that started before an eviction repopulate the cache', async () => {
    const principal = apiKeyPrincipal();
    const accounts = fakeFetch(() => ({ principal, expiresAt: null }));
    const auth = await authenticatorWith(accounts.impl);
    const key = newApiKey();
    const release = accounts.hold();
    const pending = auth.resolveApiKey(key);
    await waitFor(async () => accounts.calls.length === 1);
    auth.evictApiKey(principal.apiKeyId as string);
    release();
    await pending;
    expect(auth.stats().size).toBe(0);
    await auth.resolveApiKey(key);
    expect(accounts.calls).toHaveLength(2);
  });

  it('caches a look-up when an eviction in flight concerns another credential', async () => {
    const principal = apiKeyPrincipal();
    const accounts = fakeFetch(() => ({ principal, expiresAt: null }));
    const auth = await authenticatorWith(accounts.impl);
    const key = newApiKey();
    const release = accounts.hold();
    const pending = auth.resolveApiKey(key);
    await waitFor(async () => accounts.calls.length === 1);
    auth.evictApiKey('some-other-key-id');
    auth.evictApiKeyHash(sha256Hex(newApiKey()));
    auth.evictUser('some-user');
    release();
    await pending;
    await auth.resolveApiKey(key);
    expect(accounts.calls).toHaveLength(1);
  });

  it('does not cache a look-up whose key hash was revoked while it was in flight', async () => {
    const principal = apiKeyPrincipal();
    const accounts = fakeFetch(() => ({ principal, expiresAt: null }));
    const auth = await authenticatorWith(accounts.impl);
    const key = newApiKey();
    const release = accounts.hold();
    const pending = auth.resolveApiKey(key);
    await waitFor(async () => accounts.calls.length === 1);
    auth.evictApiKeyHash(sha256Hex(key));
    release();
    await pending;
    expect(auth.stats().size).toBe(0);
  });

  it('does not keep an entry past the credential expiry', async () => {
    const principal = apiKeyPrincipal();
    let now = Date.parse('2026-01-01T00:00:00Z');
    const accounts = fakeFetch(() => ({ principal, expiresAt: new Date(now + 80).toISOString() }));
    const auth = await authenticatorWith(accounts.impl, { now: () => now });
    const key = newApiKey();
    await auth.resolveApiKey(key);
    now += 79;
    await auth.resolveApiKey(key);
    expect(accounts.calls).toHaveLength(1);
    now += 2;
    await auth.resolveApiKey(key);
    expect(accounts.calls).toHaveLength(2);
  });

  it('evicts the sessions of a user, and by token and hash', async () => {
    const first = sessionPrincipal();
    const accounts = fakeFetch(() => ({ principal: first, expiresAt: null }));
    const auth = await authenticatorWith(accounts.impl);
    await auth.resolveSession('a');
    expect(auth.evictUser('usr_other')).toBe(0);
    expect(auth.evictUser(first.userId as string, first.organizationId)).toBe(1);
    await auth.resolveSession('a');
    auth.evictSessionToken('a');
    expect(auth.stats().size).toBe(0);
    await auth.resolveSession('a');
    auth.evictSessionHash(sha256Hex('a'));
    expect(auth.stats().size).toBe(0);
  });

  it('fails with 502 when accounts misbehaves and 503 when it is not configured', async () => {
    const broken = await authenticatorWith(fakeFetch(() => 500).impl);
    await expect(broken.resolveApiKey(newApiKey())).rejects.toMatchObject({ code: 'bad-gateway' });
    const garbage = await authenticatorWith(fakeFetch(() => ({ principal: { kind: 'alien' } }) as never).impl);
    await expect(garbage.resolveApiKey(newApiKey())).rejects.toMatchObject({ code: 'bad-gateway' });
    const unconfigured = await authenticatorWith(fakeFetch(() => 500).impl, { accountsUrl: undefined });
    await expect(unconfigured.resolveApiKey(newApiKey())).rejects.toMatchObject({ code: 'service-unavailable' });
  });

  it('answers malformed without a look-up', async () => {
    const accounts = fakeFetch(() => 500);
    const auth = await authenticatorWith(accounts.impl);
    expect(await auth.resolveApiKey('sgl_live_nope')).toEqual({ principal: null, reason: 'malformed' });
    expect(await auth.resolveSession('x'.repeat(600))).toEqual({ principal: null, reason: 'malformed' });
    expect(accounts.calls).toHaveLength(0);
  });
});
