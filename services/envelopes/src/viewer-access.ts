import { enqueueEvent } from '@sigil/kit/bus';
import { AppError, notFound } from '@sigil/kit/errors';
import { VIEWER_ACCESS_TTL_SECONDS, VIEWER_GRACE_DAYS, type ViewerEnvelopeView, type ViewerGrant } from '@sigil/proto/internal-viewers';
import type { FileStore } from '@strata/stream/file-store';
import type { Db } from './db.ts';
import type { Envelope, EnvelopeViewer } from './generated/prisma/client.ts';
import { organizationName } from './mail/outbox-mail.ts';
import { completedDocument } from './sealed.ts';
import { ENVELOPE_INCLUDE, type EnvelopeRow } from './views.ts';

const DAY_MS = 86_400_000;

/** Who a signing-service call is about: the organization of its principal, the envelope and the viewer. */
export interface ViewerRef {
  organizationId: string;
  envelopeId: string;
  viewerId: string;
}

/** An envelope has ended when it completed, or was voided, declined or expired; one in progress has not. */
export function envelopeEnd(envelope: Pick<Envelope, 'completedAt' | 'endedAt'>): Date | null {
  return envelope.completedAt ?? envelope.endedAt;
}

/** A viewer can still look while it is not revoked and its envelope is not more than 30 days past its end. */
export function viewerActive(viewer: Pick<EnvelopeViewer, 'revokedAt'>, envelope: Pick<Envelope, 'completedAt' | 'endedAt'>, now: Date): boolean {
  const end = envelopeEnd(envelope);
  return viewer.revokedAt === null && (end === null || now.getTime() <= end.getTime() + VIEWER_GRACE_DAYS * DAY_MS);
}

const stopped = () => new AppError('unauthorized', 'The viewer link is not valid: it was revoked, or the envelope ended more than 30 days ago.');

/** The signing service's side of viewers (proto/src/internal-viewers.ts): tokens, the read-only view, the first open, the document. */
export function createViewerAccess(deps: { db: Db; store: FileStore; clock: () => Date }) {
  const grant = (viewer: EnvelopeViewer & { envelope: Envelope }, expiresAt: Date): ViewerGrant => ({
    organizationId: viewer.organizationId,
    testMode: viewer.envelope.testMode,
    envelopeId: viewer.envelopeId,
    viewerId: viewer.id,
    documentAccess: viewer.documentAccess,
    expiresAt: expiresAt.toISOString(),
  });

  /** The envelope and viewer a call names, 404 when they do not belong together or to the organization, 401 once the viewer stopped. */
  async function load(ref: ViewerRef): Promise<{ envelope: EnvelopeRow; viewer: EnvelopeViewer }> {
    const envelope = await deps.db.envelope.findFirst({ where: { id: ref.envelopeId, organizationId: ref.organizationId }, include: ENVELOPE_INCLUDE });
    const viewer = envelope?.viewers.find((v) => v.id === ref.viewerId);
    if (!envelope || !viewer) throw notFound(`Viewer ${ref.viewerId} of envelope ${ref.envelopeId}`);
    if (!viewerActive(viewer, envelope, deps.clock())) throw stopped();
    return { envelope, viewer };
  }

  return {
    /** A link token for an access token (signing minted it; only its hash comes here), as often as the viewer is active. */
    async exchange(linkTokenHash: string, accessTokenHash: string): Promise<ViewerGrant> {
      const now = deps.clock();
      const viewer = await deps.db.envelopeViewer.findUnique({ where: { linkTokenHash }, include: { envelope: true } });
      if (!viewer || !viewerActive(viewer, viewer.envelope, now)) throw stopped();
      const expiresAt = new Date(now.getTime() + VIEWER_ACCESS_TTL_SECONDS * 1000);
      await deps.db.viewerAccessToken.create({ data: { tokenHash: accessTokenHash, viewerId: viewer.id, expiresAt, createdAt: now } });
      return grant(viewer, expiresAt);
    },

    /** The viewer behind an access token, while the token lasts and the viewer is active. */
    async resolve(accessTokenHash: string): Promise<ViewerGrant> {
      const now = deps.clock();
      const token = await deps.db.viewerAccessToken.findUnique({ where: { tokenHash: accessTokenHash }, include: { viewer: { include: { envelope: true } } } });
      if (!token || token.expiresAt.getTime() <= now.getTime() || !viewerActive(token.viewer, token.viewer.envelope, now)) throw new AppError('unauthorized', 'A valid viewer token is required.');
      return grant(token.viewer, token.expiresAt);
    },

    /** The read-only status: recipients' roles, names and progress; never an e-mail address or a field value. */
    async view(ref: ViewerRef): Promise<ViewerEnvelopeView> {
      const { envelope, viewer } = await load(ref);
      const iso = (date: Date | null) => date?.toISOString() ?? null;
      return {
        object: 'viewer_envelope',
        id: envelope.id,
        status: envelope.status as ViewerEnvelopeView['status'],
        seal: envelope.seal as ViewerEnvelopeView['seal'],
        title: envelope.templateName,
        organizationName: await organizationName(deps.db, envelope.organizationId),
        testMode: envelope.testMode,
        documentAvailable: viewer.documentAccess && envelope.originalKey !== null,
        recipients: [...envelope.recipients]
          .sort((a, b) => a.order - b.order || a.position - b.position)
          .map((r) => ({ role: r.role, name: r.name, status: r.status, order: r.order, signedAt: iso(r.completedAt), declinedAt: iso(r.declinedAt) })),
        viewer: { id: viewer.id, name: viewer.name, documentAccess: viewer.documentAccess },
        sentAt: iso(envelope.sentAt),
        completedAt: iso(envelope.completedAt),
        expiresAt: envelope.expiresAt.toISOString(),
        createdAt: envelope.createdAt.toISOString(),
      };
    },

    /** Records the first open (`viewer.opened`, in the audit trail); later calls change nothing. */
    async opened(ref: ViewerRef): Promise<void> {
      const { envelope, viewer } = await load(ref);
      await deps.db.$transaction(async (tx) => {
        const first = await tx.envelopeViewer.updateMany({ where: { id: viewer.id, firstOpenedAt: null }, data: { firstOpenedAt: deps.clock() } });
        if (first.count === 0) return;
        await enqueueEvent(tx, {
          type: 'viewer.opened',
          organizationId: envelope.organizationId,
          data: { envelopeId: envelope.id, testMode: envelope.testMode, viewerId: viewer.id, email: viewer.email, actor: { kind: 'viewer', id: viewer.id } },
        });
      });
    },

    /** The sealed PDF once sealed; before, the original with the values signed so far stamped in (the completed document once completed). */
    async document(ref: ViewerRef): Promise<Buffer> {
      const { envelope, viewer } = await load(ref);
      if (!viewer.documentAccess) throw new AppError('forbidden', 'The sender did not let viewers of this envelope see its document.');
      if (envelope.sealedKey) return deps.store.get(envelope.sealedKey);
      if (!envelope.originalKey) throw new AppError('document-not-ready', `Envelope ${envelope.id} is still rendering; its document is not ready yet.`);
      return completedDocument(deps.store, envelope);
    },
  };
}

export type ViewerAccess = ReturnType<typeof createViewerAccess>;
