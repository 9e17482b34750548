import { baseServiceConfig, z } from '@sigil/kit/config';

/** The evidence service's environment, read once by main.ts. */
export const evidenceConfig = baseServiceConfig.extend({
  /** The envelopes service (the completed documents to seal, and where the sealed ones go). */
  ENVELOPES_URL: z.string().url(),
  /** Signs this service's own principal for the internal calls it makes. */
  INTERNAL_JWT_PRIVATE_KEY: z.string().min(1),
  /** The sealing identity: an RSA key (PKCS#8 PEM) and its certificate chain (PEM, signing certificate first)... */
  SEAL_KEY_PEM: z.string().min(1).optional(),
  SEAL_CERT_PEM: z.string().min(1).optional(),
  /** ...or a PKCS#12 file (base64) and its password. */
  SEAL_P12_BASE64: z.string().min(1).optional(),
  SEAL_P12_PASSWORD: z.string().default(''),
  /** An RFC 3161 timestamp authority (HTTP): with it, seals are PAdES B-T. */
  TSA_URL: z.string().url().optional(),
  /** The anchor key, a C2SP signed-note signer key (`PRIVATE+KEY+<name>+<id>+<key>`); its name is the keys.json `kid`. */
  ANCHOR_SIGNING_KEY: z.string().startsWith('PRIVATE+KEY+'),
  /** At most one anchor per log per interval; new leaves are anchored within about 1.25 intervals (at most 60 s). */
  ANCHOR_INTERVAL_MS: z.coerce.number().int().min(100).max(48_000).default(15_000),
  /** Where the public reaches Sigil: names the logs (checkpoint origins) and goes on certificates. */
  PUBLIC_URL: z.string().url().default('http://localhost'),
  RATE_LIMIT_VERIFY_PER_MINUTE: z.coerce.number().int().min(1).default(60),
  RATE_LIMIT_PUBLIC_PER_MINUTE: z.coerce.number().int().min(1).default(240),
}).refine((c) => Boolean(c.SEAL_P12_BASE64 || (c.SEAL_KEY_PEM && c.SEAL_CERT_PEM)), { message: 'set SEAL_KEY_PEM and SEAL_CERT_PEM, or SEAL_P12_BASE64', path: ['SEAL_KEY_PEM'] });

export type EvidenceConfig = z.infer<typeof evidenceConfig>;
