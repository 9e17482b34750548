/** The provider's keys, made at start: a SAML signing key with its certificate, and the OpenID provider's JWKS. */
import { generateKeyPair, randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { generateSealingIdentity } from '@sigil/kit/sealing-identity';
import type { SamlSigner } from './saml-response.ts';

/** The provider's keys: made at start unless given (the local stack keeps them, so connections survive a restart). */
export interface LocalIdpKeys {
  /** The SAML signing key (PKCS#8 PEM) and its certificate (PEM), published in the metadata. */
  saml: { privateKeyPem: string; certificatePem: string };
  /** The OpenID provider's ID token signing key: a private RSA JWK with `kid`, `alg` RS256 and `use` sig. */
  oidcJwk: Record<string, unknown>;
}

export async function generateLocalIdpKeys(): Promise<LocalIdpKeys> {
  const [saml, oidcJwk] = await Promise.all([samlSigningKey(), oidcSigningJwk()]);
  return { saml, oidcJwk };
}

export interface SamlSigningIdentity extends SamlSigner {
  certificatePem: string;
}

export function samlSigningIdentity(keys: LocalIdpKeys['saml']): SamlSigningIdentity {
  return { ...keys, certificateBase64: pemBody(keys.certificatePem) };
}

/** An RSA key and a certificate for it (the leaf of kit's local identity: its CA is of no use to SAML peers). */
async function samlSigningKey(): Promise<LocalIdpKeys['saml']> {
  const identity = await generateSealingIdentity('Sigil local identity provider');
  const certificatePem = identity.chainPem.slice(0, identity.chainPem.indexOf('-----END CERTIFICATE-----') + '-----END CERTIFICATE-----'.length) + '\n';
  return { privateKeyPem: identity.keyPem, certificatePem };
}

/** A key unrelated to the provider's certificate: what a forged response would be signed with. */
export async function unrelatedPrivateKeyPem(): Promise<string> {
  const { privateKey } = await promisify(generateKeyPair)('rsa', { modulusLength: 2048 });
  return privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
}

/** The OpenID provider's signing key as a private JWK (RS256). */
async function oidcSigningJwk(): Promise<Record<string, unknown>> {
  const { privateKey } = await promisify(generateKeyPair)('rsa', { modulusLength: 2048 });
  return { ...privateKey.export({ format: 'jwk' }), kid: randomUUID(), alg: 'RS256', use: 'sig' };
}

const pemBody = (pem: string) => pem.replace(/-----(BEGIN|END) CERTIFICATE-----/g, '').replace(/\s+/g, '');
