import { enqueueEvent } from '@sigil/kit/bus';
import { AppError, notFound } from '@sigil/kit/errors';
import type { SignerField, SignerOutcome, SignerView, SubmitValues } from '@sigil/proto/internal-envelopes';
import type { TemplateField } from '@sigil/proto/internal-templates';
import type { FileStore } from '@strata/stream/file-store';
import type { Db, Tx } from './db.ts';
import { lockEnvelope } from './envelopes.ts';
import { organizationName } from './mail/outbox-mail.ts';
import { stampValues } from './render-pdf.ts';
import { envelopeTransition, isRecipientsTurn, recipientTransition } from './state.ts';
import { revokeTokens } from './tokens.ts';
import { announceTurn, startNextTurn } from './turns.ts';
import { checkSubmission, fillable, publicValue } from './values.ts';
import { ENVELOPE_INCLUDE, toEnvelopeView, type EnvelopeRow } from './views.ts';

export interface SignerDeps {
  db: Db;
  store: FileStore;
  clock: () => Date;
}

export interface SignerRef {
  organizationId: string;
  envelopeId: string;
  recipientId: string;
}

interface Actor {
  from: string;
  userAgent: string;
}

type RecipientRow = EnvelopeRow['recipients'][number];

function recipientOf(row: EnvelopeRow, recipientId: string): RecipientRow {
  const recipient = row.recipients.find((r) => r.id === recipientId);
  if (!recipient) throw notFound(`Recipient ${recipientId}`);
  return recipient;
}

/** Every value filled so far: the variables' and each finished recipient's, by field id. */
function filledValues(row: EnvelopeRow): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  const variables = row.variables as Record<string, string>;
  for (const field of row.fields as unknown as TemplateField[]) if (field.variable && variables[field.variable] !== undefined) values[field.id] = variables[field.variable];
  for (const recipient of row.recipients) Object.assign(values, (recipient.values ?? {}) as Record<string, unknown>);
  return values;
}

/** Refuses a change unless it is the recipient's turn: 409 `conflict` once they finished, `not-recipients-turn` otherwise. */
function requireTurn(row: EnvelopeRow, recipient: RecipientRow): void {
  if (recipient.status === 'completed' || recipient.status === 'declined') throw new AppError('conflict', `Recipient ${recipient.id} has already ${recipient.status === 'completed' ? 'signed' : 'declined'}.`);
  if (!isRecipientsTurn(row.status, recipient.status)) throw new AppError('not-recipients-turn', `It is not recipient ${recipient.id}'s turn to sign (envelope ${row.status}, recipient ${recipient.status}).`);
}

/** The envelope's values for `envelope.completed`: variables, then by role each field's value (drawn images hashed). */
function completedValues(row: EnvelopeRow) {
  const recipients: Record<string, Record<string, unknown>> = {};
  for (const recipient of row.recipients) {
    recipients[recipient.role] = Object.fromEntries(Object.entries((recipient.values ?? {}) as Record<string, unknown>).map(([id, value]) => [id, publicValue(value)]));
  }
  return { variables: row.variables as Record<string, unknown>, recipients };
}

/** What the signing service asks of envelopes for a signer (proto/src/internal-envelopes.ts). */
export function createSignerService(deps: SignerDeps) {
  const { db } = deps;
  const load = async (ref: SignerRef) => {
    const row = await db.envelope.findFirst({ where: { id: ref.envelopeId, organizationId: ref.organizationId }, include: ENVELOPE_INCLUDE });
    if (!row) throw notFound(`Envelope ${ref.envelopeId}`);
    return { row, recipient: recipientOf(row, ref.recipientId) };
  };

  async function change<T>(ref: SignerRef, apply: (tx: Tx, row: EnvelopeRow, recipient: RecipientRow, now: Date) => Promise<T>): Promise<T> {
    return db.$transaction(async (tx) => {
      const row = await lockEnvelope(tx, { id: ref.envelopeId, organizationId: ref.organizationId });
      return apply(tx, row, recipientOf(row, ref.recipientId), deps.clock());
    });
  }

  return {
    async view(ref: SignerRef): Promise<SignerView> {
      const { row, recipient } = await load(ref);
      const values = filledValues(row);
      const fields = (row.fields as unknown as TemplateField[])
        .map((f): SignerField => ({ id: f.id, role: f.role, type: f.type, required: f.required, page: f.page, x: f.x, y: f.y, width: f.width, height: f.height, readOnly: !fillable(f, recipient.role), value: publicValue(values[f.id]) ?? null }))
        .sort((a, b) => Number(a.readOnly) - Number(b.readOnly));
      return {
        envelope: { id: row.id, status: row.status, testMode: row.testMode, title: row.templateName, organizationId: row.organizationId, organizationName: await organizationName(db, row.organizationId), expiresAt: row.expiresAt.toISOString(), pageCount: (row.pages as unknown[]).length, pages: row.pages as SignerView['envelope']['pages'] },
        recipient: {
          id: recipient.id,
          role: recipient.role,
          name: recipient.name,
          email: recipient.email,
          phone: recipient.phone,
          status: recipient.status,
          verification: recipient.verification as SignerView['recipient']['verification'],
          delivery: recipient.delivery as SignerView['recipient']['delivery'],
          member: (await db.organizationMember.count({ where: { organizationId: row.organizationId, email: recipient.email } })) > 0,
        },
        yourTurn: isRecipientsTurn(row.status, recipient.status),
        fields,
      };
    },

    /** The original with the values filled so far stamped in their boxes. */
    async document(ref: SignerRef): Promise<Buffer> {
      const { row } = await load(ref);
      if (!row.originalKey) throw new AppError('document-not-ready', `Envelope ${row.id} is still rendering.`);
      const original = await deps.store.get(row.originalKey);
      const earlier = Object.fromEntries(row.recipients.flatMap((r) => Object.entries((r.values ?? {}) as Record<string, unknown>)));
      return Object.keys(earlier).length > 0 ? stampValues(original, row.fields as unknown as TemplateField[], earlier) : original;
    },

    /** The first view of the signing page: `sent` becomes `viewed` with `recipient.viewed`; later views change nothing. */
    async viewed(ref: SignerRef, actor: Actor): Promise<void> {
      await change(ref, async (tx, row, recipient, now) => {
        if (recipient.status !== 'sent' || row.status !== 'sent') return;
        await tx.recipient.update({ where: { id: recipient.id }, data: { status: recipientTransition(recipient.status, 'view'), viewedAt: now } });
        const view = toEnvelopeView(await tx.envelope.findUniqueOrThrow({ where: { id: row.id }, include: ENVELOPE_INCLUDE }));
        await enqueueEvent(tx, { type: 'recipient.viewed', organizationId: row.organizationId, data: { envelopeId: row.id, testMode: row.testMode, recipientId: recipient.id, from: actor.from, userAgent: actor.userAgent, envelope: view } });
      });
    },

    /** Signs: values checked, the recipient completed, the next turn started or the envelope completed. */
    async submit(ref: SignerRef, input: SubmitValues): Promise<SignerOutcome> {
      return change(ref, async (tx, row, recipient, now) => {
        requireTurn(row, recipient);
        const values = checkSubmission(row.fields as unknown as TemplateField[], recipient.role, input);
        await tx.recipient.update({ where: { id: recipient.id }, data: { status: recipientTransition(recipient.status, 'sign'), values: values as object, completedAt: now } });
        await revokeTokens(tx, recipient.id, now);
        const signed = await tx.envelope.findUniqueOrThrow({ where: { id: row.id }, include: ENVELOPE_INCLUDE });
        const turn = await startNextTurn(tx, signed, now);
        const finished = turn.done
          ? await tx.envelope.update({ where: { id: row.id }, data: { status: envelopeTransition(row.status, 'complete'), seal: 'pending', completedAt: now, endedAt: now }, include: ENVELOPE_INCLUDE })
          : await tx.envelope.findUniqueOrThrow({ where: { id: row.id }, include: ENVELOPE_INCLUDE });
        const view = toEnvelopeView(finished);
        const base = { envelopeId: row.id, testMode: row.testMode };
        await enqueueEvent(tx, { type: 'recipient.signed', organizationId: row.organizationId, data: { ...base, recipientId: recipient.id, from: input.from, userAgent: input.userAgent, envelope: view } });
        await announceTurn(tx, row, view, turn.started);
        if (turn.done) await enqueueEvent(tx, { type: 'envelope.completed', organizationId: row.organizationId, data: { ...base, values: completedValues(finished), envelope: view } });
        return { recipientStatus: 'completed', envelopeStatus: finished.status };
      });
    },

    /** Declines: the recipient declined, the envelope ends, every recipient's links stop working. */
    async decline(ref: SignerRef, reason: string | null, actor: Actor): Promise<SignerOutcome> {
      return change(ref, async (tx, row, recipient, now) => {
        requireTurn(row, recipient);
        await tx.recipient.update({ where: { id: recipient.id }, data: { status: recipientTransition(recipient.status, 'decline'), declinedAt: now, declineReason: reason } });
        for (const r of row.recipients) await revokeTokens(tx, r.id, now);
        const ended = await tx.envelope.update({ where: { id: row.id }, data: { status: envelopeTransition(row.status, 'decline'), endedAt: now }, include: ENVELOPE_INCLUDE });
        const view = toEnvelopeView(ended);
        const base = { envelopeId: row.id, testMode: row.testMode, recipientId: recipient.id, reason };
        await enqueueEvent(tx, { type: 'recipient.declined', organizationId: row.organizationId, data: { ...base, from: actor.from, userAgent: actor.userAgent, envelope: view } });
        await enqueueEvent(tx, { type: 'envelope.declined', organizationId: row.organizationId, data: { ...base, envelope: view } });
        return { recipientStatus: 'declined', envelopeStatus: 'declined' };
      });
    },
  };
}

export type SignerService = ReturnType<typeof createSignerService>;
