import { randomBytes } from 'node:crypto';
import { AppError } from '@sigil/kit/errors';
import { checkUrl, createPublicFetch, fetchPublicUrl, UrlRefused, type UrlPolicy } from '@sigil/kit/http';
import { createLogger } from '@sigil/kit/log';
import { checkOidcIssuer } from '@sigil/accounts/sso/oidc-rp';
import { createSsoOutbound, fetchMetadataXml } from '@sigil/accounts/sso/outbound';
import { attemptDelivery, type DeliveryDeps } from '@sigil/webhooks/deliver';
import { createSecretBox, newSecret } from '@sigil/webhooks/secrets';
import { createSender } from '@sigil/webhooks/sender';

/** What a fetcher made of a URL: refused before connecting (with its reason), or an answer it got. */
export type Outcome = { refused: string } | { answered: string };

/**
 * Every place the platform fetches a URL someone else chose, as the service itself calls it (its own function, its
 * own limits), given the test's policy (the allowed first hop on loopback, a stub resolver). A new fetcher is one row.
 * Strata's store and target endpoints are not here on purpose: they are the deployment's own infrastructure, private
 * by nature (backup-service spec: "plain http allowed for in-cluster test stores"), set by its operators.
 */
/**
 * The service files that reach the URL policy (`checkUrl`, `createPublicFetch`, `fetchPublicUrl`, `pinnedAgent`) and
 * the rows that cover them: a file that starts fetching is caught by ssrf.test.ts until it has its row.
 */
export const POLICY_USERS: Record<string, string[]> = {
  'services/webhooks/src/endpoints.ts': ['checkUrl'],
  'services/webhooks/src/deliver.ts': ['webhook delivery attempt'],
  'services/webhooks/src/sender.ts': ['webhook delivery attempt'],
  'services/accounts/src/sso/outbound.ts': ['SAML metadata URL', 'OIDC issuer discovery', 'createPublicFetch (POST)', 'fetchPublicUrl'],
};

export interface Fetcher {
  name: string;
  /** Where the service calls it. */
  usedBy: string;
  fetch(url: string, policy: UrlPolicy): Promise<Outcome>;
  /**
   * What a redirect to a refused URL comes to: `refused` (it follows redirects, each hop checked before it is dialled:
   * the refusal says `redirected to`), or `not followed` (the 3xx is the answer, or refused for its status: the
   * webhook sender and OIDC discovery follow none).
   */
  onRedirect: 'refused' | 'not followed';
}

const LIMITS = { maxBytes: 64 * 1024, timeoutMs: 5_000, maxRedirects: 3 };

/** A UrlRefused, or a 400 carrying one (the services' shape), as a refusal; anything else is rethrown. */
function refusalOf(error: unknown): Outcome {
  if (error instanceof UrlRefused) return { refused: error.message };
  if (error instanceof AppError && error.code === 'validation-failed') return { refused: error.message };
  throw error;
}

const answered = async (response: Response): Promise<Outcome> => {
  await response.body?.cancel();
  return { answered: String(response.status) };
};

const silent = createLogger('ssrf-test', 'silent');

async function webhookAttempt(url: string, policy: UrlPolicy): Promise<Outcome> {
  const secrets = createSecretBox(randomBytes(32));
  const sender = createSender();
  const deps = { db: undefined as unknown as DeliveryDeps['db'], sender, policy, secrets, clock: () => new Date(), log: silent, timeoutMs: LIMITS.timeoutMs };
  try {
    const record = await attemptDelivery(deps, {
      id: 'whdl_ssrf', endpoint_id: 'we_ssrf', event_id: 'evt_ssrf', event_type: 'envelope.completed', attempts: 0, created_at: new Date(),
      url, secret: secrets.seal('we_ssrf', newSecret()), previous_secret: null, previous_secret_expires_at: null, body: '{"type":"envelope.completed"}',
    });
    if (record.error?.startsWith('refused: ')) return { refused: record.error.slice('refused: '.length) };
    return { answered: String(record.statusCode ?? record.error) };
  } finally {
    await sender.close();
  }
}

export const FETCHERS: Fetcher[] = [
  {
    name: 'checkUrl',
    usedBy: 'webhooks: an endpoint saved (create, update); every fetcher below before each hop',
    onRedirect: 'not followed',
    fetch: async (url, policy) => checkUrl(url, policy).then(() => ({ answered: 'allowed' }), refusalOf),
  },
  {
    name: 'webhook delivery attempt',
    usedBy: 'webhooks worker: attemptDelivery + createSender (pinned connection, redirects not followed)',
    onRedirect: 'not followed',
    fetch: webhookAttempt,
  },
  {
    name: 'fetchPublicUrl',
    usedBy: 'kit: a GET of a URL someone else chose',
    onRedirect: 'refused',
    fetch: (url, policy) => fetchPublicUrl(url, { policy, ...LIMITS }).then((r) => ({ answered: String(r.status) }), refusalOf),
  },
  {
    name: 'createPublicFetch (POST)',
    usedBy: "kit: openid-client's customFetch (token endpoint)",
    onRedirect: 'refused',
    fetch: (url, policy) => createPublicFetch({ policy, ...LIMITS })(url, { method: 'POST', body: 'grant_type=authorization_code', headers: { 'content-type': 'application/x-www-form-urlencoded' } }).then(answered, refusalOf),
  },
  {
    name: 'SAML metadata URL',
    usedBy: 'accounts: PUT /v1/sso/connections/{id}/settings (metadataUrl), POST /v1/sso/saml-metadata',
    onRedirect: 'refused',
    fetch: (url, policy) => fetchMetadataXml(createSsoOutbound(policy), url).then(() => ({ answered: 'metadata' }), refusalOf),
  },
  {
    name: 'OIDC issuer discovery',
    usedBy: 'accounts: PUT /v1/sso/connections/{id}/settings (issuer), every OIDC login',
    // openid-client asks for `redirect: 'manual'` (discovery follows none) and refuses the 3xx itself.
    onRedirect: 'not followed',
    fetch: (url, policy) => checkOidcIssuer(createSsoOutbound(policy), url, 'ssrf-client').then(() => ({ answered: 'discovered' }), refusalOf),
  },
];
