import { describe, expect, it } from 'vitest';
import { loadControllerConfig } from '../src/config.ts';
import { startHealthServer } from '../src/health.ts';

describe('configuration', () => {
  const required = { STRATA_API_URL: 'http://gateway:8080', STRATA_API_TOKEN: 'token', POD_NAME: 'strata-controller-7d9f-abcde' };

  it('needs the API, its token (or a file holding it) and the pod name, and lists every field problem at once', () => {
    expect(() => loadControllerConfig({})).toThrow(/STRATA_API_URL[\s\S]*POD_NAME/);
    const { STRATA_API_TOKEN: _token, ...withoutToken } = required;
    expect(() => loadControllerConfig(withoutToken)).toThrow(/STRATA_API_TOKEN: set STRATA_API_TOKEN or STRATA_API_TOKEN_FILE/);
    expect(loadControllerConfig({ ...withoutToken, STRATA_API_TOKEN_FILE: '/var/run/secrets/strata/token' }).STRATA_API_TOKEN_FILE).toBe('/var/run/secrets/strata/token');
    expect(() => loadControllerConfig({ ...required, WATCH_NAMESPACES: 'shop,Bad_NS' })).toThrow(/WATCH_NAMESPACES/);
  });

  it('reads the namespaces to watch as a list (empty: all) and has client-go-like Lease timings', () => {
    const config = loadControllerConfig({ ...required, WATCH_NAMESPACES: ' shop , billing,' });
    expect(config.WATCH_NAMESPACES).toEqual(['shop', 'billing']);
    expect(loadControllerConfig(required)).toMatchObject({ WATCH_NAMESPACES: [], LEASE_NAME: 'strata-controller', LEASE_DURATION_SECONDS: 15, LEASE_RENEW_SECONDS: 5, PORT: 8080 });
  });

  it('refuses a renewal interval that is not shorter than the Lease duration', () => {
    for (const renew of ['15', '20']) {
      expect(() => loadControllerConfig({ ...required, LEASE_DURATION_SECONDS: '15', LEASE_RENEW_SECONDS: renew })).toThrow(/LEASE_RENEW_SECONDS: LEASE_RENEW_SECONDS must be less than LEASE_DURATION_SECONDS/);
    }
    expect(loadControllerConfig({ ...required, LEASE_DURATION_SECONDS: '15', LEASE_RENEW_SECONDS: '14' }).LEASE_RENEW_SECONDS).toBe(14);
  });
});

describe('health endpoints', () => {
  it('answers /healthz always and /readyz once the informers have listed', async () => {
    let synced = false;
    const health = await startHealthServer({ host: '127.0.0.1', port: 0, synced: () => synced });
    try {
      expect((await fetch(`${health.url}/healthz`)).status).toBe(200);
      expect((await fetch(`${health.url}/readyz`)).status).toBe(503);
      synced = true;
      expect((await fetch(`${health.url}/readyz`)).status).toBe(200);
      expect((await fetch(`${health.url}/metrics`)).status).toBe(404);
    } finally {
      await health.close();
    }
  });
});
