import type { LookupFunction } from 'node:net';
import { Agent } from 'undici';
import type { ResolvedAddress } from './url-policy.ts';

/** A DNS lookup that answers the checked address whatever it is asked: DNS is not asked again after the check. */
export function pinnedLookup(address: ResolvedAddress): LookupFunction {
  return (_host, options, callback) => {
    // `all: true` callers (happy eyeballs) want a list; the others one address.
    if ((options as { all?: boolean }).all) (callback as unknown as (e: null, a: Array<{ address: string; family: number }>) => void)(null, [{ address: address.address, family: address.family }]);
    else callback(null, address.address, address.family);
  };
}

/**
 * An undici Agent whose connections go only to the address `checkUrl` answered (null: an allow-listed origin,
 * connected as the URL says). TLS still checks the certificate against the URL's host name.
 */
export function pinnedAgent(address: ResolvedAddress | null, options: Omit<Agent.Options, 'connect'> & { connectTimeoutMs: number }): Agent {
  const { connectTimeoutMs, ...agentOptions } = options;
  return new Agent({ ...agentOptions, connect: address ? { lookup: pinnedLookup(address), timeout: connectTimeoutMs } : { timeout: connectTimeoutMs } });
}
