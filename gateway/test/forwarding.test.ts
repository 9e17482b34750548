import { describe, expect, it } from 'vitest';
import { forwardingFacts } from '../src/forwarding.ts';
import { reuseSignedTokens } from '../src/principal-tokens.ts';

const requestFrom = (peer: string, xff?: string) =>
  ({ headers: { host: 'api.example.test', 'x-request-id': 'req_1', ...(xff === undefined ? {} : { 'x-forwarded-for': xff }) }, socket: { remoteAddress: peer } }) as never;

describe('x-forwarded-for towards the services (they believe its last hop)', () => {
  it('is the socket peer when no proxy is trusted, whatever the caller wrote', () => {
    expect(forwardingFacts(requestFrom('::ffff:198.51.100.4'), 0)['x-forwarded-for']).toBe('198.51.100.4');
    expect(forwardingFacts(requestFrom('198.51.100.4', '6.6.6.6'), 0)['x-forwarded-for']).toBe('198.51.100.4');
  });
  it('ends with the client behind one or two trusted proxies, dropping the proxies themselves', () => {
    expect(forwardingFacts(requestFrom('10.0.0.1', '203.0.113.7'), 1)['x-forwarded-for']).toBe('203.0.113.7');
    expect(forwardingFacts(requestFrom('10.0.0.1', '6.6.6.6, 203.0.113.7'), 1)['x-forwarded-for']).toBe('6.6.6.6, 203.0.113.7');
    expect(forwardingFacts(requestFrom('10.0.0.1', '203.0.113.7, 10.0.0.9'), 2)['x-forwarded-for']).toBe('203.0.113.7');
    expect(forwardingFacts(requestFrom('10.0.0.1', '2001:db8::5'), 1)['x-forwarded-for']).toBe('2001:db8::5');
  });
  it('keeps the proxy-reported scheme and host only behind a trusted proxy', () => {
    const behind = { headers: { host: 'internal', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'api.example.test' }, socket: { remoteAddress: '10.0.0.1' } } as never;
    expect(forwardingFacts(behind, 1)).toMatchObject({ 'x-forwarded-proto': 'https', 'x-forwarded-host': 'api.example.test' });
    expect(forwardingFacts(behind, 0)).toMatchObject({ 'x-forwarded-proto': 'http', 'x-forwarded-host': 'internal' });
  });
});

describe('signed principal tokens', () => {
  it('are signed once per principal and re-signed once the re-use window has passed', async () => {
    let now = 0;
    let signatures = 0;
    const token = reuseSignedTokens(async (p: { id: string }) => `${p.id}.${++signatures}`, { reuseMs: 30_000, now: () => now });
    expect(await token({ id: 'a' })).toBe('a.1');
    expect(await token({ id: 'a' })).toBe('a.1');
    expect(await token({ id: 'b' })).toBe('b.2');
    now = 30_001;
    expect(await token({ id: 'a' })).toBe('a.3');
  });
  it('forgets a signature that failed', async () => {
    let fail = true;
    const token = reuseSignedTokens(async () => {
      if (fail) throw new Error('no key');
      return 'ok';
    });
    await expect(token({})).rejects.toThrow('no key');
    fail = false;
    await expect(token({})).resolves.toBe('ok');
  });
});
