/** Keys given at start are the keys used: the local stack keeps them, so a connection made once survives a restart. */
import { afterEach, expect, it } from 'vitest';
import { generateLocalIdpKeys, startLocalIdp, type LocalIdp } from '../src/index.ts';

const started: LocalIdp[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((idp) => idp.close()));
});

async function jwks(idp: LocalIdp): Promise<Array<{ kid: string; n: string; d?: string }>> {
  const configuration = (await (await fetch(`${idp.oidc.issuer}/.well-known/openid-configuration`)).json()) as { jwks_uri: string };
  return ((await (await fetch(configuration.jwks_uri)).json()) as { keys: Array<{ kid: string; n: string; d?: string }> }).keys;
}

it('publishes the same certificate and JWKS when restarted with the same keys, and new ones without', async () => {
  const keys = await generateLocalIdpKeys();
  const [first, second, other] = await Promise.all([startLocalIdp({ keys, clientSecret: 'kept' }), startLocalIdp({ keys, clientSecret: 'kept' }), startLocalIdp()]);
  started.push(first, second, other);
  expect(second.saml.signingCertPem).toBe(keys.saml.certificatePem);
  expect(first.saml.signingCertPem).toBe(second.saml.signingCertPem);
  expect(other.saml.signingCertPem).not.toBe(first.saml.signingCertPem);
  expect(second.oidc.clientSecret).toBe('kept');
  const [a, b, c] = await Promise.all([jwks(first), jwks(second), jwks(other)]);
  expect(a).toEqual(b);
  expect(a.map((key) => key.kid)).toEqual([keys.oidcJwk.kid]);
  expect(a[0]!.d).toBeUndefined();
  expect(c[0]!.n).not.toBe(a[0]!.n);
});
