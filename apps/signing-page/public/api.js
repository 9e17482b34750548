// The signing API as the page uses it: the session token from the link is exchanged once for an access token, which
// the page keeps for this tab only (a reload keeps working; nothing outlives the tab).
const STORE = 'sigil.signing.access';

/** This tab's storage, when the browser gives it (an embedded page on another site may get none: memory only then). */
function tabStore() {
  try {
    return window.sessionStorage;
  } catch {
    return undefined;
  }
}

export class ApiError extends Error {
  constructor(status, problem) {
    super(problem?.detail || `The request failed (${status}).`);
    this.status = status;
    this.problem = problem;
  }
}

async function problemOf(response) {
  try {
    return await response.json();
  } catch {
    return undefined;
  }
}

/** The access token: from the link's `#token=sgls_...` (exchanged, then removed from the address bar) or this tab's. */
export async function accessToken() {
  const fragment = new URLSearchParams(location.hash.slice(1));
  const sessionToken = fragment.get('token');
  if (sessionToken) {
    history.replaceState(null, '', location.pathname + location.search);
    const response = await fetch('/v1/signing/exchange', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: sessionToken }),
    });
    if (!response.ok) throw new ApiError(response.status, await problemOf(response));
    const { accessToken } = await response.json();
    tabStore()?.setItem(STORE, accessToken);
    return accessToken;
  }
  const kept = tabStore()?.getItem(STORE);
  if (kept) return kept;
  throw new ApiError(401, { detail: 'This page needs the signing link you received: open it again from the e-mail or the application.' });
}

export function createApi(token) {
  const call = async (method, path, body, init = {}) => {
    const headers = { authorization: `Bearer ${token}`, ...(body && !(body instanceof FormData) ? { 'content-type': 'application/json' } : {}) };
    const response = await fetch(path, { method, headers, body: body instanceof FormData ? body : body ? JSON.stringify(body) : undefined, ...init });
    if (!response.ok) throw new ApiError(response.status, await problemOf(response));
    return response;
  };
  return {
    session: async () => (await call('GET', '/v1/signing/session')).json(),
    document: async () => (await call('GET', '/v1/signing/document')).arrayBuffer(),
    submit: async (fields) => (await call('POST', '/v1/signing/submit', { fields, consent: true })).json(),
    sendCode: async () => (await call('POST', '/v1/signing/otp', {})).json(),
    verifyCode: async (code) => (await call('POST', '/v1/signing/otp/verify', { code })).json(),
    decline: async (reason) => (await call('POST', '/v1/signing/decline', reason ? { reason } : {})).json(),
    attach: async (field, file) => {
      const form = new FormData();
      form.append('field', field);
      form.append('file', file, file.name);
      return (await call('POST', '/v1/signing/attachments', form)).json();
    },
  };
}
