import type { Logger } from '@sigil/kit/log';
import type { IncomingHttpHeaders, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import {
  createLocalJWKSet,
  createRemoteJWKSet,
  decodeJwt,
  errors,
  jwtVerify,
  type CryptoKey,
  type JSONWebKeySet,
  type JWTPayload,
  type JWTVerifyGetKey,
  type JWTVerifyOptions,
} from 'jose';
import { STRATA_ROLES, type StrataPrincipal, type StrataRole } from '@sigil/proto/strata';
import { cookieValue, cookieWithout } from './credentials.ts';

/** Where the access proxy (Cloudflare Access style) puts its signed JWT, in the order they are read. */
export const DEFAULT_STRATA_CREDENTIAL_NAMES = Object.freeze({
  /** Security scheme `accessJWT`. */
  jwtHeader: 'cf-access-jwt-assertion',
  /** Security scheme `accessToken`. */
  tokenHeader: 'cf-access-token',
  /** Security scheme `accessCookie`. */
  cookie: 'CF_Authorization',
});

/** Group → role mapping used when `STRATA_ROLE_GROUPS` is not set. */
export const DEFAULT_STRATA_ROLE_GROUPS: Readonly<Record<string, StrataRole>> = Object.freeze(
  Object.fromEntries(STRATA_ROLES.map((role) => [`strata:${role}`, role])),
);

/** The algorithms an access proxy token may be signed with. */
export const STRATA_ACCESS_ALGORITHMS = ['RS256', 'ES256', 'EdDSA'] as const;

export type StrataDefaultRole = StrataRole | 'none';

/** A second issuer whose single key is trusted besides the configured ones (the local dev issuer). */
export interface TrustedIssuerKey {
  issuer: string;
  key: CryptoKey;
}

export interface StrataAuthenticatorOptions {
  /** Accepted `iss` values of the access proxy. May be empty only when `extraIssuer` is given. */
  issuers: readonly string[];
  /** Accepted `aud` values (a token must name at least one). */
  audiences: readonly string[];
  /** The access proxy's key set, fetched and cached by jose. */
  jwksUrl?: string | URL;
  /** The access proxy's key set, inline. */
  jwks?: JSONWebKeySet;
  /** Tokens whose (unverified) `iss` is this issuer are verified with this key instead. */
  extraIssuer?: TrustedIssuerKey;
  /** Header names (case-insensitive) and cookie name (case-sensitive); defaults: the Cloudflare Access names. */
  jwtHeader?: string;
  tokenHeader?: string;
  cookie?: string;
  /** Claim holding the groups (string array). A dotted path (`custom.groups`) reaches into objects. Default `groups`. */
  groupsClaim?: string;
  /** Group → role. Replaces the default mapping (`strata:<role>` → role). */
  roleGroups?: Readonly<Record<string, StrataRole>>;
  /** Role of callers none of whose groups maps to a role; `none` refuses them. Default `viewer`. */
  defaultRole?: StrataDefaultRole;
  /** Default 30. */
  clockToleranceSeconds?: number;
  /** Deadline of one fetch of the remote key set. Default 5000. */
  jwksTimeoutMs?: number;
}

/** What a request's credentials amount to. */
export type StrataAuthResult =
  /** No token in any of the three places: forwarded without a principal, the service answers 401. */
  | { kind: 'anonymous' }
  | { kind: 'authenticated'; principal: StrataPrincipal }
  /** The token is there but cannot be trusted: 401 at the gateway. `reason` is jose's message. */
  | { kind: 'invalid'; reason: string }
  /** A valid token whose groups grant no role while the default role is `none`: 403 at the gateway. */
  | { kind: 'no-role'; principalId: string }
  /** The access proxy's keys could not be fetched: 502 at the gateway. */
  | { kind: 'keys-unavailable'; error: Error };

/**
 * What the gateway answers a caller whose Strata credentials it cannot accept (the console API, /graphql and sandbox
 * tunnels alike); undefined for a caller that may go on (authenticated, or anonymous: each place decides about those).
 */
export function strataRefusal(result: StrataAuthResult, log: Logger, requestId?: unknown): { status: 401 | 403 | 502; message: string } | undefined {
  switch (result.kind) {
    case 'invalid':
      log.info({ requestId, reason: result.reason }, 'access token refused');
      return { status: 401, message: `The access token is invalid: ${result.reason}` };
    case 'no-role':
      return { status: 403, message: 'Your groups grant no Strata role.' };
    case 'keys-unavailable':
      log.warn({ err: result.error }, "could not fetch the access proxy's keys");
      return { status: 502, message: "The access proxy's signing keys could not be fetched." };
    default:
      return undefined;
  }
}

export interface StrataAuthenticator {
  /** The token a request presents: the JWT header, else the token header, else the cookie. */
  tokenOf(headers: IncomingHttpHeaders): string | undefined;
  authenticate(headers: IncomingHttpHeaders): Promise<StrataAuthResult>;
  /** Removes the three raw credentials from headers about to be forwarded (other cookies stay). */
  stripCredentials(headers: OutgoingHttpHeaders): void;
  /** The claims → principal mapping, exposed for tests and `whoami` debugging. */
  principalOf(claims: JWTPayload): StrataPrincipal | { noRole: true; id: string };
}

/** Thrown by the key resolver when the key set itself could not be obtained (not the token's fault). */
class KeysUnavailable extends Error {
  constructor(cause: unknown) {
    super(`the access proxy's key set could not be fetched: ${(cause as Error)?.message ?? String(cause)}`, { cause });
    this.name = 'KeysUnavailable';
  }
}

/** Errors of the key look-up that are the token's fault (unknown `kid`, wrong algorithm for the key). */
const TOKEN_KEY_ERRORS = new Set<string>([
  errors.JWKSNoMatchingKey.code,
  errors.JWKSMultipleMatchingKeys.code,
  errors.JOSENotSupported.code,
  errors.JOSEAlgNotAllowed.code,
  errors.JWKInvalid.code,
]);

export function createStrataAuthenticator(options: StrataAuthenticatorOptions): StrataAuthenticator {
  const jwtHeader = (options.jwtHeader ?? DEFAULT_STRATA_CREDENTIAL_NAMES.jwtHeader).toLowerCase();
  const tokenHeader = (options.tokenHeader ?? DEFAULT_STRATA_CREDENTIAL_NAMES.tokenHeader).toLowerCase();
  const cookieName = options.cookie ?? DEFAULT_STRATA_CREDENTIAL_NAMES.cookie;
  const groupsClaim = options.groupsClaim ?? 'groups';
  const roleGroups = options.roleGroups ?? DEFAULT_STRATA_ROLE_GROUPS;
  const defaultRole = options.defaultRole ?? 'viewer';
  const clockTolerance = options.clockToleranceSeconds ?? 30;
  const issuers = [...options.issuers];
  const audiences = [...options.audiences];

  if (audiences.length === 0) throw new Error('Strata authentication needs at least one audience');
  if (issuers.length > 0 && !options.jwksUrl && !options.jwks) throw new Error('Strata authentication needs the key set of its issuer (jwksUrl or jwks)');
  if (issuers.length === 0 && (options.jwksUrl || options.jwks)) throw new Error('Strata authentication has a key set but no issuer');
  if (options.jwksUrl && options.jwks) throw new Error('Strata authentication takes jwksUrl or jwks, not both');
  if (issuers.length === 0 && !options.extraIssuer) throw new Error('Strata authentication needs an issuer');
  for (const [group, role] of Object.entries(roleGroups)) {
    if (!(STRATA_ROLES as readonly string[]).includes(role)) throw new Error(`group ${group} maps to unknown role ${String(role)}`);
  }

  const keySet: JWTVerifyGetKey | undefined = options.jwks
    ? createLocalJWKSet(options.jwks)
    : options.jwksUrl
      ? createRemoteJWKSet(new URL(options.jwksUrl), { timeoutDuration: options.jwksTimeoutMs ?? 5_000 })
      : undefined;

  /** The key set, with failures to obtain it told apart from failures of the token. */
  const getKey: JWTVerifyGetKey | undefined = keySet
    ? async (protectedHeader, token) => {
        try {
          return await keySet(protectedHeader, token);
        } catch (error) {
          if (error instanceof errors.JOSEError && TOKEN_KEY_ERRORS.has(error.code)) throw error;
          throw new KeysUnavailable(error);
        }
      }
    : undefined;

  const common: JWTVerifyOptions = {
    audience: audiences,
    clockTolerance,
    requiredClaims: ['exp'],
  };

  async function verify(token: string): Promise<JWTPayload> {
    let claimedIssuer: unknown;
    try {
      claimedIssuer = decodeJwt(token).iss;
    } catch {
      // jwtVerify below reports the precise reason.
    }
    const extra = options.extraIssuer;
    if (extra && claimedIssuer === extra.issuer) {
      const { payload } = await jwtVerify(token, extra.key, { ...common, issuer: extra.issuer, algorithms: ['EdDSA'] });
      return payload;
    }
    if (!getKey) {
      // Only the extra issuer is trusted and the token does not come from it.
      throw new errors.JWTClaimValidationFailed('unexpected "iss" claim value', decodeOrEmpty(token), 'iss', 'check_failed');
    }
    const { payload } = await jwtVerify(token, getKey, { ...common, issuer: issuers, algorithms: [...STRATA_ACCESS_ALGORITHMS] });
    return payload;
  }

  function principalOf(claims: JWTPayload): StrataPrincipal | { noRole: true; id: string } {
    const email = nonEmptyString(claims.email);
    const commonName = nonEmptyString(claims.common_name);
    const sub = nonEmptyString(claims.sub);
    let id: string;
    let shownEmail: string;
    let service: boolean;
    if (email) {
      if (!sub) throw new errors.JWTClaimValidationFailed('missing required "sub" claim', claims, 'sub', 'missing');
      id = sub;
      shownEmail = email;
      service = false;
    } else if (commonName) {
      // A service token of the access proxy: no user, its client id names it (its `sub` is often empty).
      id = sub ?? commonName;
      shownEmail = commonName;
      service = true;
    } else {
      throw new errors.JWTClaimValidationFailed('the token carries neither an "email" nor a "common_name" claim', claims, 'email', 'missing');
    }

    const groups = stringList(claimAt(claims, groupsClaim));
    let role: StrataRole | undefined;
    for (const group of groups) {
      const mapped = Object.hasOwn(roleGroups, group) ? roleGroups[group] : undefined;
      if (mapped && (!role || STRATA_ROLES.indexOf(mapped) > STRATA_ROLES.indexOf(role))) role = mapped;
    }
    if (!role) {
      if (defaultRole === 'none') return { noRole: true, id };
      role = defaultRole;
    }
    const prefixed = (prefix: string) => groups.filter((g) => g.startsWith(prefix) && g.length > prefix.length).map((g) => g.slice(prefix.length));
    return {
      id,
      email: shownEmail,
      role,
      groups,
      orgs: unique([...prefixed('org:'), ...stringList(claims.orgs)]),
      projects: unique([...prefixed('project:'), ...stringList(claims.projects)]),
      service,
    };
  }

  function tokenOf(headers: IncomingHttpHeaders): string | undefined {
    return headerValue(headers[jwtHeader]) ?? headerValue(headers[tokenHeader]) ?? cookieValue(headers.cookie, cookieName);
  }

  return {
    tokenOf,
    principalOf,
    async authenticate(headers) {
      const token = tokenOf(headers);
      if (token === undefined) return { kind: 'anonymous' };
      let claims: JWTPayload;
      try {
        claims = await verify(token);
      } catch (error) {
        if (error instanceof KeysUnavailable) return { kind: 'keys-unavailable', error };
        return { kind: 'invalid', reason: reasonOf(error) };
      }
      try {
        const principal = principalOf(claims);
        if ('noRole' in principal) return { kind: 'no-role', principalId: principal.id };
        return { kind: 'authenticated', principal };
      } catch (error) {
        return { kind: 'invalid', reason: reasonOf(error) };
      }
    },
    stripCredentials(headers) {
      delete headers[jwtHeader];
      delete headers[tokenHeader];
      const cookie = headers.cookie;
      if (cookie === undefined) return;
      const rest = cookieWithout(Array.isArray(cookie) ? cookie.join('; ') : String(cookie), cookieName);
      if (rest) headers.cookie = rest;
      else delete headers.cookie;
    },
  };
}

function reasonOf(error: unknown): string {
  if (error instanceof errors.JOSEError || error instanceof TypeError) return error.message;
  return 'it could not be verified';
}

function decodeOrEmpty(token: string): JWTPayload {
  try {
    return decodeJwt(token);
  } catch {
    return {};
  }
}

function nonEmptyString(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}

/** A claim by exact name, else by dotted path into nested objects. */
function claimAt(claims: JWTPayload, name: string): unknown {
  if (Object.hasOwn(claims, name)) return claims[name];
  if (!name.includes('.')) return undefined;
  let value: unknown = claims;
  for (const part of name.split('.')) {
    if (!value || typeof value !== 'object' || !Object.hasOwn(value, part)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/** A string array claim (a single string counts as one entry; anything else as none). */
function stringList(value: unknown): string[] {
  if (typeof value === 'string') return value === '' ? [] : [value];
  if (!Array.isArray(value)) return [];
  return unique(value.filter((item): item is string => typeof item === 'string' && item !== ''));
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}

function headerValue(value: string | string[] | undefined): string | undefined {
  const first = Array.isArray(value) ? value[0] : value;
  const trimmed = first?.trim();
  return trimmed ? trimmed : undefined;
}

/** Strata's error shape, for every answer the gateway itself gives on Strata's paths: `{ "error": "..." }`. */
export function sendStrataError(res: ServerResponse, status: number, message: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = JSON.stringify({ error: message });
  res.statusCode = status;
  res.setHeader('content-type', 'application/json; charset=utf-8');
  res.setHeader('content-length', Buffer.byteLength(body));
  res.end(body);
}
