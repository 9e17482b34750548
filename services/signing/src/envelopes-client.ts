import { AppError } from '@sigil/kit/errors';
import { createServiceClient, type PrincipalSigner } from '@sigil/kit/auth';
import {
  EXCHANGE_TOKEN_PATH,
  signerDeclinePath,
  signerDocumentPath,
  signerSubmitPath,
  signerViewedPath,
  signerViewPath,
  type ExchangedSession,
  type SignerOutcome,
  type SignerView,
  type SubmitValues,
} from '@sigil/proto/internal-envelopes';

/** Who a signer is, as far as envelopes is concerned. */
export interface SignerRef {
  organizationId: string;
  testMode: boolean;
  envelopeId: string;
  recipientId: string;
}

/** The envelopes service as signing sees it (proto/src/internal-envelopes.ts). */
export interface EnvelopesClient {
  /** Spends a session token; undefined when it is not valid (unknown, used, revoked, expired, turn over). */
  exchange(tokenHash: string): Promise<ExchangedSession | undefined>;
  view(signer: SignerRef): Promise<SignerView>;
  document(signer: SignerRef): Promise<Buffer>;
  viewed(signer: SignerRef, actor: Actor): Promise<void>;
  submit(signer: SignerRef, values: SubmitValues): Promise<SignerOutcome>;
  decline(signer: SignerRef, reason: string | null, actor: Actor): Promise<SignerOutcome>;
}

export interface Actor {
  from: string;
  userAgent: string;
}

export interface EnvelopesClientOptions {
  baseUrl: string;
  signPrincipal: PrincipalSigner;
  timeoutMs?: number;
  fetch?: typeof fetch;
}

/**
 * A problem answered by envelopes, passed on to the signer as it is (its status, type slug and pointers); a 5xx is
 * envelopes failing, not the signer, and is a 503 naming it.
 */
export function passOn(status: number, body: { type?: string; detail?: string; errors?: unknown }): AppError {
  if (status >= 500) return new AppError('service-unavailable', `The envelopes service is not available (it answered ${status}); try again.`);
  const code = (body.type?.split('/').pop() ?? 'internal') as ConstructorParameters<typeof AppError>[0];
  try {
    return new AppError(code, body.detail ?? `The envelopes service answered ${status}.`, { errors: body.errors as never });
  } catch {
    return new AppError('bad-gateway', `The envelopes service answered ${status}.`);
  }
}

export function createEnvelopesClient(options: EnvelopesClientOptions): EnvelopesClient {
  const send = createServiceClient({ target: 'envelopes', actorId: 'signing', ...options });

  async function call(organizationId: string, testMode: boolean, path: string, init: { method?: string; body?: unknown } = {}): Promise<Response> {
    const response = await send(path, { organizationId, mode: testMode ? 'test' : 'live', method: init.method, json: init.body });
    if (!response.ok) throw passOn(response.status, (await response.json().catch(() => ({}))) as Record<string, string>);
    return response;
  }
  const of = (s: SignerRef) => [s.organizationId, s.testMode] as const;

  return {
    async exchange(tokenHash) {
      try {
        // Before the exchange no organization is known: the token names it (as the gateway's own principal, 'platform').
        return (await (await call('platform', false, EXCHANGE_TOKEN_PATH, { method: 'POST', body: { tokenHash } })).json()) as ExchangedSession;
      } catch (error) {
        if (error instanceof AppError && error.code === 'unauthorized') return undefined;
        throw error;
      }
    },
    async view(s) {
      return (await (await call(...of(s), signerViewPath(s.envelopeId, s.recipientId))).json()) as SignerView;
    },
    async document(s) {
      return Buffer.from(await (await call(...of(s), signerDocumentPath(s.envelopeId, s.recipientId))).arrayBuffer());
    },
    async viewed(s, actor) {
      await call(...of(s), signerViewedPath(s.envelopeId, s.recipientId), { method: 'POST', body: actor });
    },
    async submit(s, values) {
      return (await (await call(...of(s), signerSubmitPath(s.envelopeId, s.recipientId), { method: 'POST', body: values })).json()) as SignerOutcome;
    },
    async decline(s, reason, actor) {
      return (await (await call(...of(s), signerDeclinePath(s.envelopeId, s.recipientId), { method: 'POST', body: { reason, ...actor } })).json()) as SignerOutcome;
    },
  };
}
