import { ApiError } from './problem.ts';

/** A refusal because the organization's plan lacks a feature (403 `plan-upgrade-required`), as the pages show it. */
export interface PlanRefusal {
  /** The API's words: what the plan allows. */
  detail: string;
  /** The entitlement it names (`signingLinks`, `viewersPerEnvelope`, `viewerDocumentAccess`), when it names one. */
  feature?: string;
  /** Where to upgrade: the dashboard's own path when `upgradeUrl` is this app's billing page, else `upgradeUrl` itself. */
  href: string;
}

const BILLING_PATH = '/settings/billing';

/** The plan refusal `error` carries, or undefined for any other error. */
export function planRefusal(error: unknown, origin = globalThis.location?.origin ?? 'http://localhost'): PlanRefusal | undefined {
  if (!(error instanceof ApiError)) return undefined;
  const problem = error.problem as ApiError['problem'] & { type?: string; upgradeUrl?: string; feature?: string };
  if (problem.status !== 403 || !problem.type?.endsWith('/plan-upgrade-required')) return undefined;
  return { detail: problem.detail ?? problem.title, feature: problem.feature, href: upgradeHref(problem.upgradeUrl, origin) };
}

/** `/settings/billing` for the app's own billing page (under `/app` on this origin), the absolute URL for another one. */
export function upgradeHref(upgradeUrl: string | undefined, origin: string): string {
  if (!upgradeUrl) return BILLING_PATH;
  let url: URL;
  try {
    url = new URL(upgradeUrl, origin);
  } catch {
    return BILLING_PATH;
  }
  if (url.origin === origin && url.pathname.startsWith('/app/')) return url.pathname.slice('/app'.length) + url.search;
  return url.href;
}
