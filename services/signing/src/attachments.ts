import { createHash } from 'node:crypto';
import { enqueueEvent } from '@sigil/kit/bus';
import { AppError, pointerTo, type FieldError } from '@sigil/kit/errors';
import { newId } from '@sigil/kit/ids';
import type { UploadedFile } from '@sigil/kit/api';
import type { FileStore } from '@strata/stream/file-store';
import type { Signer } from './access.ts';
import type { Db } from './db.ts';
import type { Actor, EnvelopesClient } from './envelopes-client.ts';

/** What an attachment may be, recognised by its first bytes (the declared type is not trusted). */
const KINDS: ReadonlyArray<{ type: string; magic: Buffer }> = [
  { type: 'application/pdf', magic: Buffer.from('%PDF-') },
  { type: 'image/png', magic: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]) },
  { type: 'image/jpeg', magic: Buffer.from([0xff, 0xd8, 0xff]) },
];

export interface AttachmentDeps {
  db: Db;
  store: FileStore;
  envelopes: EnvelopesClient;
}

export function createAttachmentService(deps: AttachmentDeps) {
  return {
    /** `POST /v1/signing/attachments`: a PDF, PNG or JPEG for one of the signer's attachment fields, on their turn. */
    async upload(signer: Signer, fieldId: string, file: UploadedFile | undefined, actor: Actor) {
      if (!file || file.bytes.length === 0) throw new AppError('validation-failed', 'file is required.', { errors: [{ pointer: '/body/file', detail: 'is required and not empty' }] });
      const kind = KINDS.find((k) => file.bytes.subarray(0, k.magic.length).equals(k.magic));
      if (!kind) throw new AppError('unsupported-media-type', 'An attachment must be a PDF, PNG or JPEG file.');
      const view = await deps.envelopes.view(signer);
      const field = view.fields.find((f) => f.id === fieldId && f.type === 'attachment' && !f.readOnly);
      if (!field) throw new AppError('validation-failed', `field ${fieldId} is not an attachment field of this recipient.`, { errors: [{ pointer: '/body/field', detail: 'is not an attachment field of this recipient' }] });
      if (!view.yourTurn) throw new AppError('not-recipients-turn', `It is not recipient ${signer.recipientId}'s turn to sign.`);
      const id = newId('att');
      const storageKey = `${signer.organizationId}/${signer.envelopeId}/${signer.recipientId}/${id}`;
      await deps.store.put(storageKey, file.bytes, kind.type);
      const row = await deps.db.$transaction(async (tx) => {
        const created = await tx.attachment.create({
          data: {
            id,
            organizationId: signer.organizationId,
            envelopeId: signer.envelopeId,
            recipientId: signer.recipientId,
            fieldId,
            fileName: file.fileName.slice(0, 255) || 'attachment',
            contentType: kind.type,
            size: file.bytes.length,
            sha256: createHash('sha256').update(file.bytes).digest('hex'),
            storageKey,
          },
        });
        await enqueueEvent(tx, {
          type: 'attachment.uploaded',
          organizationId: signer.organizationId,
          data: { envelopeId: signer.envelopeId, testMode: signer.testMode, recipientId: signer.recipientId, attachmentId: id, field: fieldId, fileName: created.fileName, contentType: created.contentType, sha256: created.sha256, size: created.size, ...actor },
        });
        return created;
      });
      return { object: 'signing_attachment' as const, id: row.id, field: row.fieldId, fileName: row.fileName, contentType: row.contentType, size: row.size, sha256: row.sha256, createdAt: row.createdAt.toISOString() };
    },

    /** Every `att_` value of a submission must be this signer's upload for that very field. */
    async checkSubmitted(signer: Signer, fields: Record<string, unknown>): Promise<void> {
      const given = Object.entries(fields).filter((entry): entry is [string, string] => typeof entry[1] === 'string' && entry[1].startsWith('att_'));
      if (given.length === 0) return;
      const rows = await deps.db.attachment.findMany({ where: { id: { in: given.map(([, id]) => id) }, recipientId: signer.recipientId } });
      const errors: FieldError[] = given
        .filter(([fieldId, id]) => !rows.some((r) => r.id === id && r.fieldId === fieldId))
        .map(([fieldId]) => ({ pointer: pointerTo('body', 'fields', fieldId), detail: 'is not an attachment this recipient uploaded for this field' }));
      if (errors.length > 0) throw new AppError('validation-failed', `${errors.length} attachment(s) were not uploaded by this recipient for their field.`, { errors });
    },
  };
}

export type AttachmentService = ReturnType<typeof createAttachmentService>;
