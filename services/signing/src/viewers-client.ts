import { AppError } from '@sigil/kit/errors';
import { createServiceClient } from '@sigil/kit/auth';
import {
  VIEWER_EXCHANGE_PATH,
  VIEWER_RESOLVE_PATH,
  viewerDocumentPath,
  viewerEnvelopePath,
  viewerOpenedPath,
  type ViewerEnvelopeView,
  type ViewerGrant,
} from '@sigil/proto/internal-viewers';
import { passOn, type EnvelopesClientOptions } from './envelopes-client.ts';

/** The envelopes service as signing asks it about viewers (proto/src/internal-viewers.ts). */
export interface ViewersClient {
  /** Records an access token (by its hash) for a link token (by its hash); undefined when the link no longer works. */
  exchange(linkTokenHash: string, accessTokenHash: string): Promise<ViewerGrant | undefined>;
  /** The viewer of an access token (by its hash); undefined when it expired or its viewer stopped. */
  resolve(accessTokenHash: string): Promise<ViewerGrant | undefined>;
  view(viewer: ViewerGrant): Promise<ViewerEnvelopeView>;
  opened(viewer: ViewerGrant): Promise<void>;
  document(viewer: ViewerGrant): Promise<Buffer>;
}

export function createViewersClient(options: EnvelopesClientOptions): ViewersClient {
  const send = createServiceClient({ target: 'envelopes', actorId: 'signing', ...options });

  async function call(organizationId: string, testMode: boolean, path: string, init: { method?: string; body?: unknown } = {}): Promise<Response> {
    const response = await send(path, { organizationId, mode: testMode ? 'test' : 'live', method: init.method, json: init.body });
    if (!response.ok) throw passOn(response.status, (await response.json().catch(() => ({}))) as Record<string, string>);
    return response;
  }
  /** Before a token is resolved no organization is known: the token names it (as the gateway's own principal, 'platform'). */
  async function grant(path: string, body: Record<string, string>): Promise<ViewerGrant | undefined> {
    try {
      return (await (await call('platform', false, path, { method: 'POST', body })).json()) as ViewerGrant;
    } catch (error) {
      if (error instanceof AppError && error.code === 'unauthorized') return undefined;
      throw error;
    }
  }
  const of = (v: ViewerGrant) => [v.organizationId, v.testMode] as const;

  return {
    exchange: (linkTokenHash, accessTokenHash) => grant(VIEWER_EXCHANGE_PATH, { linkTokenHash, accessTokenHash }),
    resolve: (accessTokenHash) => grant(VIEWER_RESOLVE_PATH, { accessTokenHash }),
    async view(v) {
      return (await (await call(...of(v), viewerEnvelopePath(v.envelopeId, v.viewerId))).json()) as ViewerEnvelopeView;
    },
    async opened(v) {
      await call(...of(v), viewerOpenedPath(v.envelopeId, v.viewerId), { method: 'POST' });
    },
    async document(v) {
      return Buffer.from(await (await call(...of(v), viewerDocumentPath(v.envelopeId, v.viewerId))).arrayBuffer());
    },
  };
}
