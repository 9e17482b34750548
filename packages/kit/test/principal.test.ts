import { describe, expect, it } from 'vitest';
import { SignJWT, importJWK } from 'jose';
import { createPrincipalSigner, createPrincipalVerifier, generateInternalKeyPair, callerScope, requirePermission } from '../src/auth/principal.ts';
import { apiKeyPrincipal, sessionPrincipal } from '../src/testing.ts';
import { AppError } from '../src/errors.ts';
import { rememberVerified } from '../src/auth/verified-tokens.ts';

describe('internal principal tokens', () => {
  it('round-trips a principal signed by the gateway key', async () => {
    const keys = await generateInternalKeyPair();
    const sign = await createPrincipalSigner(keys.privateJwk);
    const verify = await createPrincipalVerifier(keys.publicJwk);
    const principal = sessionPrincipal();
    expect(await verify(await sign(principal))).toEqual(principal);
  });

  it('rejects a token signed by another key', async () => {
    const ours = await generateInternalKeyPair();
    const theirs = await generateInternalKeyPair();
    const verify = await createPrincipalVerifier(ours.publicJwk);
    const token = await (await createPrincipalSigner(theirs.privateJwk))(apiKeyPrincipal());
    await expect(verify(token)).rejects.toMatchObject({ code: 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED' });
  });

  it('rejects an expired token and one with unknown permissions', async () => {
    const keys = await generateInternalKeyPair();
    const verify = await createPrincipalVerifier(keys.publicJwk);
    const key = await importJWK(keys.privateJwk, 'EdDSA');
    const base = () => new SignJWT({ ...apiKeyPrincipal() }).setProtectedHeader({ alg: 'EdDSA' }).setIssuer('sigil-gateway').setAudience('sigil-services');
    await expect(verify(await base().setIssuedAt(1000).setExpirationTime(1060).sign(key))).rejects.toMatchObject({ code: 'ERR_JWT_EXPIRED' });
    const otherAudience = await new SignJWT({ ...apiKeyPrincipal() }).setProtectedHeader({ alg: 'EdDSA' }).setIssuer('sigil-gateway').setAudience('strata-services').setExpirationTime('1m').sign(key);
    await expect(verify(otherAudience)).rejects.toMatchObject({ code: 'ERR_JWT_CLAIM_VALIDATION_FAILED', claim: 'aud' });
    const bad = await new SignJWT({ ...apiKeyPrincipal(), permissions: ['root:everything'] })
      .setProtectedHeader({ alg: 'EdDSA' }).setIssuer('sigil-gateway').setAudience('sigil-services').setExpirationTime('1m').sign(key);
    await expect(verify(bad)).rejects.toThrow(/permissions/);
  });

  it('scopes callers to organization plus key or user', () => {
    expect(callerScope(apiKeyPrincipal({ organizationId: 'org_a', apiKeyId: 'key_1' }))).toBe('org_a:key_1');
    expect(callerScope(sessionPrincipal({ organizationId: 'org_a', userId: 'usr_1' }))).toBe('org_a:usr_1');
  });

  it('names the missing permission', () => {
    const error = (() => {
      try {
        requirePermission(apiKeyPrincipal({ permissions: [] }), 'envelope:void');
      } catch (e) {
        return e as AppError;
      }
    })();
    expect(error).toBeInstanceOf(AppError);
    expect(error?.status).toBe(403);
    expect(error?.message).toBe('Missing permission: envelope:void.');
  });
});

describe('verified tokens', () => {
  it('checks a signature once per token and never trusts a token past its expiry', async () => {
    let now = 1_000_000;
    let checks = 0;
    const verify = rememberVerified(
      async (token: string) => {
        checks += 1;
        if (token === 'bad') throw new Error('signature verification failed');
        return { principal: { token }, expiresAt: 1_060_000 };
      },
      { now: () => now, max: 2 },
    );
    expect(await verify('a')).toEqual({ token: 'a' });
    expect(await verify('a')).toEqual({ token: 'a' });
    expect(checks).toBe(1);
    await expect(verify('bad')).rejects.toThrow('signature verification failed');
    await expect(verify('bad')).rejects.toThrow('signature verification failed');
    expect(checks).toBe(3);
    now = 1_060_000;
    await verify('a');
    expect(checks).toBe(4);
  });
});
