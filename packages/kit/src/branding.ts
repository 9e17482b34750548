/**
 * An organization's e-mail branding as the services that send its e-mails read it: one call to accounts
 * (proto/src/internal-branding.ts), cached for BRANDING_TTL_MS and dropped at once when accounts notifies a change (or
 * billing a plan change, which changes what the plan allows). Branding never holds up an e-mail: `brandingOrNone`
 * answers nothing (an unbranded e-mail) when accounts cannot be reached.
 */
import { BRANDING_TTL_MS, brandingChangedSubject, brandingPath, type OrganizationBranding } from '@sigil/proto/internal-branding';
import { entitlementsChangedSubject } from '@sigil/proto/internal-billing';
import type { PrincipalSigner } from './auth/index.ts';
import type { Bus } from './bus/index.ts';
import type { Logger } from './log.ts';
import { createOrganizationCache, internalJsonSource, type OrganizationCache, type OrganizationSource } from './organization-cache.ts';

export type { OrganizationBranding };

/** Where answers come from: accounts over HTTP in a process, a fake in a service's tests. */
export type BrandingSource = OrganizationSource<OrganizationBranding>;

export function accountsBrandingSource(options: { baseUrl: string; signPrincipal: PrincipalSigner; actorId: string; timeoutMs?: number }): BrandingSource {
  // Short: an e-mail waits for this answer, and goes out unbranded without it.
  return internalJsonSource({ ...options, target: 'accounts', timeoutMs: options.timeoutMs ?? 2_000, path: brandingPath });
}

export type BrandingCache = OrganizationCache<OrganizationBranding>;

export interface BrandingCacheOptions {
  source: BrandingSource;
  /** Notifications of branding and plan changes; without a bus, only the TTL renews an answer. */
  bus?: Pick<Bus, 'listen' | 'onReconnect'>;
  ttlMs?: number;
  /** A stale answer serves this long while accounts cannot be reached. */
  staleForMs?: number;
  /** After a failed read without a stale answer, reads fail at once for this long (a down accounts delays no send). */
  retryAfterMs?: number;
  maxEntries?: number;
  now?: () => number;
  log?: Logger;
}

export function createBrandingCache(options: BrandingCacheOptions): Promise<BrandingCache> {
  return createOrganizationCache({
    ...options,
    // A plan change changes what the plan allows, so it drops the answer too.
    changedSubjects: [brandingChangedSubject, entitlementsChangedSubject],
    ttlMs: options.ttlMs ?? BRANDING_TTL_MS,
    staleForMs: options.staleForMs ?? 60 * 60_000,
    retryAfterMs: options.retryAfterMs ?? 5_000,
    what: 'the branding',
  });
}

/**
 * The organization's branding for an e-mail about to go out, or undefined (unbranded) when there is no cache or
 * accounts cannot be reached; a failure is logged, never thrown, so branding never blocks a send.
 */
export async function brandingOrNone(cache: Pick<BrandingCache, 'get'> | undefined, organizationId: string, log?: Logger): Promise<OrganizationBranding | undefined> {
  if (!cache) return undefined;
  try {
    return await cache.get(organizationId);
  } catch (error) {
    log?.warn({ err: error, organizationId }, 'the organization branding could not be read: the e-mail goes out unbranded');
    return undefined;
  }
}
