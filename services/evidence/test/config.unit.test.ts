import { describe, expect, it } from 'vitest';
import { loadConfig } from '@sigil/kit/config';
import { evidenceConfig } from '../src/config.ts';

const env = {
  PORT: '0',
  DATABASE_URL: 'postgres://evidence@127.0.0.1:5432/sigil_evidence',
  NATS_URL: 'nats://127.0.0.1:4222',
  INTERNAL_JWT_PUBLIC_KEY: '{}',
  ENVELOPES_URL: 'http://127.0.0.1:3003',
  INTERNAL_JWT_PRIVATE_KEY: '{}',
  ANCHOR_SIGNING_KEY: 'PRIVATE+KEY+test+00000000+AAAA',
};

describe('evidence configuration', () => {
  it('takes a PEM key and certificate or a PKCS#12 file, with the defaults filled in', () => {
    expect(loadConfig(evidenceConfig, { ...env, SEAL_KEY_PEM: 'key', SEAL_CERT_PEM: 'cert' })).toMatchObject({
      ANCHOR_INTERVAL_MS: 15_000,
      PUBLIC_URL: 'http://localhost',
      RATE_LIMIT_VERIFY_PER_MINUTE: 60,
      RATE_LIMIT_PUBLIC_PER_MINUTE: 240,
      SEAL_P12_PASSWORD: '',
    });
    expect(loadConfig(evidenceConfig, { ...env, SEAL_P12_BASE64: 'cDEy', RATE_LIMIT_VERIFY_PER_MINUTE: '5' })).toMatchObject({ RATE_LIMIT_VERIFY_PER_MINUTE: 5 });
  });

  it('refuses to start without a sealing identity, naming what to set', () => {
    expect(() => loadConfig(evidenceConfig, { ...env, SEAL_KEY_PEM: 'key' })).toThrow(/SEAL_KEY_PEM: set SEAL_KEY_PEM and SEAL_CERT_PEM, or SEAL_P12_BASE64/);
  });
});
