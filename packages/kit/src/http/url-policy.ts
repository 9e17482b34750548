import { lookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';

/** A resolved address of a host; the connection goes to this address and no other. */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to every address it has (the tests stub it: no DNS leaves the machine). */
export type Resolver = (host: string) => Promise<ResolvedAddress[]>;

export const systemResolver: Resolver = async (host) => (await lookup(host, { all: true, verbatim: true })).map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));

/**
 * Which URLs a service may call on someone else's say (a webhook endpoint, an IdP's metadata URL): public `https://`
 * only, plus the deployment's allowed origins (`http://127.0.0.1:*`, `http://localhost:*` on a developer's machine),
 * whose addresses are not checked.
 */
export interface UrlPolicy {
  /** Origins allowed whatever they resolve to; `*` as the port matches any port. */
  allowedOrigins: string[];
  resolve: Resolver;
}

/** A URL that may not be called, or a call that was given up; the message is the reason (`points to a private ...`). */
export class UrlRefused extends Error {
  override name = 'UrlRefused';
}

const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');

/** An address that may be called: ordinary unicast, never private, loopback, link-local, multicast and the like. */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  if (parsed.range() !== 'unicast') return false;
  // ipaddr.js calls whatever it has no name for unicast (the IPv4-compatible `::7f00:1` among them); only 2000::/3
  // is global unicast.
  return parsed.kind() === 'ipv4' || (parsed as ipaddr.IPv6).match(GLOBAL_UNICAST_V6);
}


function allowListed(url: URL, origins: string[]): boolean {
  return origins.some((origin) => {
    const [scheme, rest] = origin.split('://') as [string, string];
    const [host, port = ''] = rest.replace(/\/$/, '').split(/:(?=[^:]*$)/) as [string, string?];
    if (`${scheme}:` !== url.protocol || host.toLowerCase() !== url.hostname.toLowerCase()) return false;
    return port === '*' || port === (url.port || (url.protocol === 'https:' ? '443' : '80'));
  });
}

/** The address to connect to for a URL, or UrlRefused saying why. Checked before every connection (and every redirect). */
export async function checkUrl(raw: string, policy: UrlPolicy): Promise<{ url: URL; address: ResolvedAddress | null }> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UrlRefused('is not a URL');
  }
  if (url.username || url.password) throw new UrlRefused('must not carry credentials');
  // Allow-listed development origins (loopback by nature) connect as the URL says.
  if (allowListed(url, policy.allowedOrigins)) return { url, address: null };
  if (url.protocol !== 'https:') throw new UrlRefused('must be a public https:// URL');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (ipaddr.isValid(host)) {
    if (!isPublicAddress(host)) throw new UrlRefused(`points to a private or reserved address (${host})`);
    return { url, address: { address: host, family: host.includes(':') ? 6 : 4 } };
  }
  // A trailing dot (`localhost.`, `intranet.`) names the same host.
  const name = host.replace(/\.$/, '').toLowerCase();
  if (!name.includes('.') || name === 'localhost' || /\.(localhost|local|internal)$/.test(name)) throw new UrlRefused('must name a public host');
  let addresses: ResolvedAddress[];
  try {
    addresses = await policy.resolve(host);
  } catch {
    throw new UrlRefused(`host ${host} does not resolve`);
  }
  if (addresses.length === 0) throw new UrlRefused(`host ${host} does not resolve`);
  // Every address must be public: a name that also resolves privately could be rebound to it between checks.
  const refused = addresses.find((a) => !isPublicAddress(a.address));
  if (refused) throw new UrlRefused(`host ${host} resolves to a private or reserved address (${refused.address})`);
  return { url, address: addresses[0] as ResolvedAddress };
}
