// The local stack's dev issuer: the gateway mints access tokens at `POST /api/dev/token`. It stands in for the
// access proxy beside the console API and is not part of strata.v1.yaml, so its answer is checked here.
import { ApiError, errorMessage, parseJson, sendOrExplain, type ClientOptions, type Schema } from '@strata/client';

export const DEV_TOKEN_PATH = '/api/dev/token';

export interface DevTokenRequest {
  email: string;
  /** Absent: the issuer's default role. */
  role?: Schema<'Role'>;
}

export interface DevToken {
  token: string;
  expiresAt: string | undefined;
}

/** Asks the dev issuer of `opts.server` for a token (sent without credentials). */
export async function requestDevToken(opts: Omit<ClientOptions, 'token'>, body: DevTokenRequest): Promise<DevToken> {
  const request = new Request(opts.server + DEV_TOKEN_PATH, {
    method: 'POST',
    headers: { accept: 'application/json', 'content-type': 'application/json', 'user-agent': opts.userAgent },
    body: JSON.stringify(body),
    signal: opts.signal ?? null,
  });
  const res = await sendOrExplain(opts.fetch, opts.server, request);
  const text = await res.text().catch(() => '');
  const answer = parseJson(text) ?? text;
  if (res.status === 404) {
    throw new ApiError(404, `${opts.server} has no dev token issuer (only the local stack has one); use --token with a token from the access proxy`);
  }
  if (!res.ok) throw new ApiError(res.status, errorMessage(res, answer));
  const token = field(answer, 'token');
  if (!token) throw new ApiError(0, 'the dev issuer answered without a token');
  return { token, expiresAt: field(answer, 'expiresAt') };
}

function field(answer: unknown, key: string): string | undefined {
  if (!answer || typeof answer !== 'object' || !(key in answer)) return undefined;
  const value: unknown = (answer as Record<string, unknown>)[key];
  return typeof value === 'string' ? value : undefined;
}
