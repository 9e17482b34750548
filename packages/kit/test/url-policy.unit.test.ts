// The URL policy: public https only, every resolved address public, the deployment's allow-list for development.
import { describe, expect, it } from 'vitest';
import { checkUrl, isPublicAddress, type Resolver } from '../src/http/url-policy.ts';

const dns: Record<string, string[]> = {
  'hooks.example.com': ['93.184.216.34'],
  'v6.example.com': ['2606:2800:220:1:248:1893:25c8:1946'],
  'private.example.com': ['10.1.2.3'],
  'rebind.example.com': ['93.184.216.34', '127.0.0.1'],
  'metadata.example.com': ['169.254.169.254'],
};
const resolve: Resolver = async (host) => {
  const addresses = dns[host];
  if (!addresses) throw new Error('ENOTFOUND');
  return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
};
const policy = { allowedOrigins: ['http://127.0.0.1:*', 'http://localhost:*'], resolve };

describe('URL policy', () => {
  it('accepts public https hosts and addresses, and answers the address to connect to', async () => {
    expect((await checkUrl('https://hooks.example.com/sigil', policy)).address).toEqual({ address: '93.184.216.34', family: 4 });
    expect((await checkUrl('https://v6.example.com/x', policy)).address?.family).toBe(6);
    expect((await checkUrl('https://93.184.216.34/x', policy)).address?.address).toBe('93.184.216.34');
  });

  it.each([
    ['http://hooks.example.com/x', /https/],
    ['https://10.0.0.1/x', /private/],
    ['https://192.168.1.10/x', /private/],
    ['https://127.0.0.1/x', /private/],
    ['https://169.254.169.254/latest/meta-data', /private/],
    ['https://224.0.0.1/x', /private/],
    ['https://[::1]/x', /private/],
    ['https://[fd00::1]/x', /private/],
    ['https://[fe80::1]/x', /private/],
    ['https://[::ffff:127.0.0.1]/x', /private/],
    ['https://[::ffff:10.0.0.1]/x', /private/],
    ['https://100.64.0.1/x', /private/],
    ['https://private.example.com/x', /resolves to a private/],
    ['https://rebind.example.com/x', /resolves to a private.*127\.0\.0\.1/],
    ['https://metadata.example.com/x', /resolves to a private/],
    ['https://localhost/x', /public host/],
    ['https://intranet/x', /public host/],
    ['https://nowhere.example.com/x', /does not resolve/],
    ['https://user:pw@hooks.example.com/x', /credentials/],
    ['http://127.0.0.2:8080/x', /https/],
    ['not a url', /not a URL/],
  ])('refuses %s', async (url, reason) => {
    await expect(checkUrl(url, policy)).rejects.toThrow(reason);
  });

  it('allows the development origins as they are, on any port, and nothing else on loopback', async () => {
    expect(await checkUrl('http://127.0.0.1:4567/hook', policy)).toMatchObject({ address: null });
    expect(await checkUrl('http://localhost:80/hook', policy)).toMatchObject({ address: null });
    await expect(checkUrl('http://127.0.0.1:4567/hook', { ...policy, allowedOrigins: [] })).rejects.toThrow(/https/);
    await expect(checkUrl('http://localhost:4567/hook', { ...policy, allowedOrigins: ['http://localhost:3000'] })).rejects.toThrow(/https/);
  });

  it('classifies addresses', () => {
    expect(['8.8.8.8', '2001:4860:4860::8888'].map(isPublicAddress)).toEqual([true, true]);
    expect(['0.0.0.0', '::', '172.16.0.1', 'ff02::1', '198.18.0.1', 'nonsense'].map(isPublicAddress)).toEqual([false, false, false, false, false, false]);
    // IPv4-compatible, discard-only and NAT64 forms, and anything outside 2000::/3.
    expect(['::7f00:1', '::a00:1', '100::1', '64:ff9b::7f00:1', '4000::1', 'fec0::1'].map(isPublicAddress)).toEqual([false, false, false, false, false, false]);
  });
});
