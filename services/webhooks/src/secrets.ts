import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { seal, unseal } from '@sigil/kit/crypto';

/** How long the previous secret keeps signing after a rotation. */
export const ROTATION_OVERLAP_MS = 24 * 3_600_000;
export const USER_AGENT = 'Sigil-Webhooks/1';

/** `whsec_` + base64 of 32 random bytes (the Standard Webhooks form). */
export function newSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** Secrets at rest are sealed (AES-256-GCM) with the deployment's key, bound to their endpoint. */
export function createSecretBox(key: Buffer) {
  return {
    seal: (endpointId: string, secret: string) => seal(key, secret, `webhook-secret:${endpointId}`),
    open: (endpointId: string, box: string) => unseal(key, box, `webhook-secret:${endpointId}`),
  };
}

export type SecretBox = ReturnType<typeof createSecretBox>;

/**
 * The headers of one attempt: the event id (the same on every attempt), this attempt's time, and a `v1,` signature
 * per secret that signs now (two for a day after a rotation), made with the official library.
 */
export function signedHeaders(input: { eventId: string; body: string; secrets: string[]; at: Date }): Record<string, string> {
  const signatures = input.secrets.map((secret) => new Webhook(secret).sign(input.eventId, input.at, input.body));
  return {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    'webhook-id': input.eventId,
    'webhook-timestamp': String(Math.floor(input.at.getTime() / 1000)),
    'webhook-signature': signatures.join(' '),
  };
}
