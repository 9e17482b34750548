import { SIGIL } from './product.ts';
import { STRATA } from './strata.ts';

/**
 * The SCIM 2.0 endpoint identity providers provision through (accounts serves it; the gateway forwards it with the
 * SCIM bearer token untouched and no principal).
 */
export const SCIM_PATH = '/scim/v2';

export const SERVICE_NAMES = [
  'gateway',
  'accounts',
  'templates',
  'envelopes',
  'signing',
  'webhooks',
  'billing',
  'evidence',
  // Strata (console API under STRATA.apiPrefix)
  'backup-catalog',
  'sandbox',
] as const;
export type ServiceName = (typeof SERVICE_NAMES)[number];

/** The services of Strata: their public paths are under `/api/v1` and their errors are `{ error }`. */
export const STRATA_SERVICE_NAMES = ['backup-catalog', 'sandbox'] as const satisfies readonly ServiceName[];
export type StrataServiceName = (typeof STRATA_SERVICE_NAMES)[number];

export function isStrataService(name: ServiceName): name is StrataServiceName {
  return (STRATA_SERVICE_NAMES as readonly string[]).includes(name);
}

export interface Route {
  /**
   * Segment pattern:
   * - a literal segment matches itself exactly;
   * - `{name}` matches exactly one non-empty segment;
   * - a final `**` matches zero or more further segments, so `/v1/templates/**`
   *   matches `/v1/templates`, `/v1/templates/tpl_x` and anything deeper, but
   *   never `/v1/templates-old` (matching is per segment, not per character).
   */
  readonly pattern: string;
  readonly service: ServiceName;
}

/**
 * The public path -> owning service table (architecture brief, "Ownership of
 * the public paths"; Strata's `/api/v1` tree at the end). Ordered most specific
 * first: the first match wins.
 */
export const routeTable: ReadonlyArray<Route> = [
  // evidence carves its paths out of the envelopes tree, so it comes first
  { pattern: '/v1/envelopes/{id}/events/**', service: 'evidence' },
  { pattern: '/v1/envelopes/**', service: 'envelopes' },
  { pattern: '/v1/signing-links/**', service: 'envelopes' },

  { pattern: '/v1/templates/**', service: 'templates' },

  { pattern: '/v1/signing/**', service: 'signing' },
  { pattern: '/v1/links/**', service: 'signing' },
  { pattern: '/v1/viewer/**', service: 'signing' },

  { pattern: '/v1/webhook-endpoints/**', service: 'webhooks' },
  { pattern: '/v1/events/{id}/redeliver', service: 'webhooks' },

  { pattern: '/v1/auth/**', service: 'accounts' },
  { pattern: '/v1/api-keys/**', service: 'accounts' },
  { pattern: '/v1/organization/**', service: 'accounts' },
  { pattern: '/v1/public/logos/**', service: 'accounts' },
  { pattern: '/v1/sso/**', service: 'accounts' },
  { pattern: '/v1/scim/**', service: 'accounts' },
  // SCIM 2.0 for identity providers (outside the OpenAPI contract: RFC 7644's own protocol, its own bearer token)
  { pattern: `${SCIM_PATH}/**`, service: 'accounts' },

  { pattern: '/v1/billing/**', service: 'billing' },
  { pattern: '/v1/usage', service: 'billing' },

  { pattern: '/v1/public/anchors/**', service: 'evidence' },
  { pattern: '/v1/public/verify', service: 'evidence' },
  { pattern: SIGIL.keysPath, service: 'evidence' },

  { pattern: '/v1/openapi.json', service: 'gateway' },

  // Strata's console API (docs/strata-api.md): the sandboxes are carved out of the catalog's tree.
  { pattern: `${STRATA.apiPrefix}/sandboxes/**`, service: 'sandbox' },
  { pattern: `${STRATA.apiPrefix}/**`, service: 'backup-catalog' },
];

function splitPath(path: string): string[] {
  return path.split('/').filter((segment) => segment !== '');
}

interface CompiledRoute {
  readonly segments: readonly string[];
  readonly rest: boolean;
  readonly service: ServiceName;
}

function compile(route: Route): CompiledRoute {
  const segments = splitPath(route.pattern);
  const rest = segments.at(-1) === '**';
  if (rest) segments.pop();
  if (segments.some((s) => s.includes('*'))) {
    throw new Error(`route pattern ${route.pattern}: '**' is only allowed as the last segment`);
  }
  return { segments, rest, service: route.service };
}

const compiled: readonly CompiledRoute[] = routeTable.map(compile);

function matchCompiled(route: CompiledRoute, segments: readonly string[]): boolean {
  if (route.rest ? segments.length < route.segments.length : segments.length !== route.segments.length) {
    return false;
  }
  return route.segments.every((expected, i) => {
    const actual = segments[i];
    if (actual === undefined) return false;
    return expected.startsWith('{') && expected.endsWith('}') ? actual.length > 0 : expected === actual;
  });
}

/** Whether `path` (no query) matches a single route pattern. */
export function matchRoute(pattern: string, path: string): boolean {
  return matchCompiled(compile({ pattern, service: 'gateway' }), splitPath(stripQuery(path)));
}

function stripQuery(path: string): string {
  const cut = path.search(/[?#]/);
  return cut === -1 ? path : path.slice(0, cut);
}

/** True for `.`/`..` segments, also percent-encoded, and undecodable ones. */
function isUnsafeSegment(segment: string): boolean {
  let decoded: string;
  try {
    decoded = decodeURIComponent(segment);
  } catch {
    return true;
  }
  return decoded === '.' || decoded === '..' || decoded.includes('/') || decoded.includes('\\');
}

/**
 * The service owning a public path, or undefined when no service owns it.
 * Takes the path without query (a query or fragment, if present, is ignored).
 * Empty segments (`//`, a trailing `/`) are ignored. Segments are compared as
 * they arrive (percent-encoded). A path with a dot segment (`.`, `..`, also
 * percent-encoded) or an encoded slash is never routed: an upstream could
 * resolve it to a path another service owns.
 */
export function resolveService(path: string): ServiceName | undefined {
  const segments = splitPath(stripQuery(path));
  if (segments.some(isUnsafeSegment)) return undefined;
  for (const route of compiled) {
    if (matchCompiled(route, segments)) return route.service;
  }
  return undefined;
}

/**
 * The WebSocket tunnel of an exposed sandbox (outside the OpenAPI document: it is an upgrade, not an operation). The
 * gateway authenticates the upgrade like any console call (role restorer) and forwards it to the sandbox service.
 */
export const SANDBOX_TUNNEL_PATTERN = /^\/api\/v1\/sandboxes\/([A-Za-z0-9][A-Za-z0-9.-]{0,252})\/tunnel$/;
export const sandboxTunnelPath = (name: string): string => `/api/v1/sandboxes/${encodeURIComponent(name)}/tunnel`;

/** Where the gateway serves the dashboard (apps/dashboard, built with this base). */
export const DASHBOARD_BASE_PATH = '/app';

/**
 * The dashboard's page where an invited person joins, with the invitation's token: the link the invitation e-mail
 * carries (accounts) and the one the dashboard shows its inviter. `publicUrl` is the gateway's public origin.
 */
export function acceptInvitationUrl(publicUrl: string, token: string): string {
  return `${publicUrl.replace(/\/+$/, '')}${DASHBOARD_BASE_PATH}/accept-invitation?token=${encodeURIComponent(token)}`;
}
