import { createHash } from 'node:crypto';
import { enqueueEvent } from '@sigil/kit/bus';
import { AppError, notFound } from '@sigil/kit/errors';
import type { TemplateField } from '@sigil/proto/internal-templates';
import type { FileStore } from '@strata/stream/file-store';
import type { Db } from './db.ts';
import { lockEnvelope } from './envelopes.ts';
import { stampValues } from './render-pdf.ts';
import { ENVELOPE_INCLUDE, toEnvelopeView, type EnvelopeRow } from './views.ts';

/** The original with every recipient's values stamped: what recipients and CC receive, and what the seal signs. */
export async function completedDocument(store: FileStore, envelope: EnvelopeRow): Promise<Buffer> {
  const original = await store.get(envelope.originalKey as string);
  const values = Object.fromEntries(envelope.recipients.flatMap((r) => Object.entries((r.values ?? {}) as Record<string, unknown>)));
  return stampValues(original, envelope.fields as unknown as TemplateField[], values);
}

/** The evidence service's side of sealing (proto/src/internal-envelopes.ts): the document to seal, and the sealed one. */
export function createSealedDocuments(deps: { db: Db; store: FileStore; clock: () => Date }) {
  const completed = async (organizationId: string, envelopeId: string) => {
    const row = await deps.db.envelope.findFirst({ where: { id: envelopeId, organizationId }, include: ENVELOPE_INCLUDE });
    if (!row) throw notFound(`Envelope ${envelopeId}`);
    if (row.status !== 'completed') throw new AppError('document-not-ready', `Envelope ${envelopeId} is ${row.status}: only a completed envelope is sealed.`);
    return row;
  };
  return {
    async toSeal(organizationId: string, envelopeId: string): Promise<Buffer> {
      return completedDocument(deps.store, await completed(organizationId, envelopeId));
    },

    /** Keeps the certificate of completion (signed by evidence), served as `version=certificate`. */
    async keepCertificate(organizationId: string, envelopeId: string, pdf: Buffer): Promise<void> {
      requirePdf(pdf);
      const row = await completed(organizationId, envelopeId);
      const key = `${row.organizationId}/${row.id}/certificate.pdf`;
      await deps.store.put(key, pdf, 'application/pdf');
      await deps.db.envelope.update({ where: { id: envelopeId }, data: { certificateKey: key } });
    },

    /** Keeps the sealed PDF; `seal` becomes `sealed` with `envelope.sealed` (a second delivery changes nothing). */
    async keep(organizationId: string, envelopeId: string, pdf: Buffer): Promise<void> {
      requirePdf(pdf);
      const row = await completed(organizationId, envelopeId);
      const key = `${row.organizationId}/${row.id}/sealed.pdf`;
      await deps.store.put(key, pdf, 'application/pdf');
      const sha256 = createHash('sha256').update(pdf).digest('hex');
      await deps.db.$transaction(async (tx) => {
        const current = await lockEnvelope(tx, { id: envelopeId });
        if (current.seal === 'sealed' && current.sealedSha256 === sha256) return;
        const updated = await tx.envelope.update({ where: { id: envelopeId }, data: { seal: 'sealed', sealedKey: key, sealedSha256: sha256, sealedAt: deps.clock(), sealError: null }, include: ENVELOPE_INCLUDE });
        await enqueueEvent(tx, { type: 'envelope.sealed', organizationId: row.organizationId, data: { envelopeId, testMode: row.testMode, sha256, envelope: toEnvelopeView(updated) } });
      });
    },

    /** Evidence gave up its quick retries: `seal` becomes `failed` with the reason (it keeps retrying, and may still seal). */
    async fail(organizationId: string, envelopeId: string, reason: string): Promise<void> {
      await completed(organizationId, envelopeId);
      await deps.db.$transaction(async (tx) => {
        const current = await lockEnvelope(tx, { id: envelopeId });
        if (current.seal === 'sealed' || current.seal === 'failed') return;
        const updated = await tx.envelope.update({ where: { id: envelopeId }, data: { seal: 'failed', sealError: reason.slice(0, 1000) }, include: ENVELOPE_INCLUDE });
        await enqueueEvent(tx, { type: 'envelope.seal_failed', organizationId: updated.organizationId, data: { envelopeId, testMode: updated.testMode, reason: reason.slice(0, 1000), envelope: toEnvelopeView(updated) } });
      });
    },
  };
}

export type SealedDocuments = ReturnType<typeof createSealedDocuments>;

function requirePdf(pdf: Buffer): void {
  if (!pdf.subarray(0, 5).equals(Buffer.from('%PDF-'))) throw new AppError('validation-failed', 'The document must be a PDF.', { errors: [{ pointer: '/body', detail: 'is not a PDF' }] });
}
