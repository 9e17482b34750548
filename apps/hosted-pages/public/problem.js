// The API as these pages call it: JSON in and out, an RFC 9457 problem turned into an ApiError that keeps its status,
// its `detail`, the offending fields and when to try again (`Retry-After`).

export class ApiError extends Error {
  constructor(status, problem, retryAfter) {
    super(problem?.detail || `The request failed (${status}).`);
    this.status = status;
    this.problem = problem ?? {};
    this.retryAfter = retryAfter;
  }

  /** The problem's slug: `link-paused` from `https://sigil.dev/problems/link-paused`. */
  get slug() {
    return String(this.problem.type ?? '').split('/').pop();
  }
}

/** Seconds to wait from a `Retry-After` value (delay-seconds or an HTTP date), or undefined when it says nothing. */
export function retryAfterSeconds(value, now = Date.now()) {
  if (value === null || value === undefined || value === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

/** "in 42 seconds", "in 5 minutes", "in about 3 hours": when someone told to wait may try again. */
export function waitText(seconds) {
  if (seconds <= 1) return 'in a moment';
  if (seconds < 90) return `in ${seconds} seconds`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 90) return `in ${minutes} minutes`;
  const hours = Math.round(minutes / 60);
  return `in about ${hours} hour${hours === 1 ? '' : 's'}`;
}

async function problemOf(response) {
  try {
    return await response.json();
  } catch {
    return undefined;
  }
}

/** One call: the parsed JSON of a 2xx (or the Response itself when `raw`), an ApiError otherwise. */
export async function request(method, path, { body, token, raw = false } = {}) {
  const headers = { ...(body ? { 'content-type': 'application/json' } : {}), ...(token ? { authorization: `Bearer ${token}` } : {}) };
  let response;
  try {
    response = await fetch(path, { method, headers, body: body ? JSON.stringify(body) : undefined });
  } catch {
    throw new ApiError(0, { detail: 'We could not reach Sigil: check your connection and try again.' });
  }
  if (!response.ok) throw new ApiError(response.status, await problemOf(response), retryAfterSeconds(response.headers.get('retry-after')));
  if (raw) return response;
  return response.status === 204 ? undefined : response.json();
}
