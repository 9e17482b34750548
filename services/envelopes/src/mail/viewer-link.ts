import { sha256Hex } from '@sigil/kit/crypto';
import { randomBase62 } from '@sigil/kit/ids';
import { SIGIL } from '@sigil/proto/product';
import type { Tx } from '../db.ts';
import type { EnvelopeRow } from '../views.ts';
import { deliver, organizationName, type MailDeps } from './outbox-mail.ts';

/** The hosted viewer page of a link token under a public base URL (the token in the fragment, never in a server log). */
export const viewerPageUrl = (publicUrl: string, token: string): string => `${publicUrl.replace(/\/+$/, '')}/view#token=${token}`;

/**
 * E-mails a new viewer its status link (`viewer.added`): the `sglv_` token is minted here, as the e-mail goes out, and
 * only its SHA-256 is kept, committed before the e-mail leaves so the link works the moment it can be read. A viewer
 * revoked before its e-mail gets nothing; a failed send puts the earlier hash back (the event is delivered again).
 */
export async function sendViewerLink(tx: Tx, deps: MailDeps, envelope: EnvelopeRow, viewerId: string): Promise<void> {
  const viewer = envelope.viewers.find((v) => v.id === viewerId);
  if (!viewer || viewer.revokedAt) return;
  const token = `${SIGIL.viewerLinkTokenPrefix}${randomBase62(40)}`;
  const linkTokenHash = sha256Hex(token);
  const claimed = await deps.db.envelopeViewer.updateMany({ where: { id: viewer.id, revokedAt: null, linkTokenHash: viewer.linkTokenHash }, data: { linkTokenHash } });
  if (claimed.count === 0) return; // revoked, or sent by another delivery of the event, since it was read
  try {
    await deliver(tx, deps, envelope, { address: viewer.email }, {
      kind: 'viewer_link',
      url: viewerPageUrl(deps.publicUrl, token),
      documentAccess: viewer.documentAccess,
      organizationName: await organizationName(tx, envelope.organizationId),
      envelopeTitle: envelope.templateName,
      recipientName: viewer.name ?? viewer.email,
      testMode: envelope.testMode,
    });
  } catch (error) {
    await deps.db.envelopeViewer
      .updateMany({ where: { id: viewer.id, linkTokenHash }, data: { linkTokenHash: viewer.linkTokenHash } })
      .catch((cause: unknown) => deps.log?.warn({ err: cause, viewerId }, 'an unsent viewer link could not be put back'));
    throw error;
  }
}
