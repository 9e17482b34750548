import { hkdfSync, randomBytes } from 'node:crypto';
import { parseSecretsKey, seal, unseal } from '@sigil/kit/crypto';

/**
 * OIDC client secrets are sealed at rest (AES-256-GCM, kit crypto) with the connection's id as additional data, so a
 * sealed value copied to another row does not open. The key is `SSO_SECRETS_KEY` (32 bytes, base64); a deployment
 * without one derives it (HKDF-SHA256) from its INTERNAL_JWT_PRIVATE_KEY, a secret it has anyway. Rotating that key
 * then means re-entering the client secrets.
 */
export function ssoSecretsKey(config: { SSO_SECRETS_KEY?: string; INTERNAL_JWT_PRIVATE_KEY: string }): Buffer {
  if (config.SSO_SECRETS_KEY) return parseSecretsKey(config.SSO_SECRETS_KEY);
  return Buffer.from(hkdfSync('sha256', config.INTERNAL_JWT_PRIVATE_KEY, 'sigil-accounts', 'sso client secrets', 32));
}

/** For tests and a process without configuration: a key that lives as long as the process. */
export const ephemeralSecretsKey = (): Buffer => randomBytes(32);

export const sealClientSecret = (key: Buffer, connectionId: string, secret: string) => seal(key, secret, `sso:${connectionId}`);
export const openClientSecret = (key: Buffer, connectionId: string, sealed: string) => unseal(key, sealed, `sso:${connectionId}`);
