import { createHash } from 'node:crypto';
import type { Bus, RunningConsumer } from '@sigil/kit/bus';
import { enqueueEvent } from '@sigil/kit/bus';
import type { Logger } from '@sigil/kit/log';
import { JOBS_STREAM, jobSubject } from '@sigil/proto/events';
import type { TemplateField } from '@sigil/proto/internal-templates';
import type { FileStore } from '@strata/stream/file-store';
import { renderJobName } from '../create.ts';
import type { Db, Tx } from '../db.ts';
import { lockEnvelope } from '../envelopes.ts';
import { renderOriginal } from '../render-pdf.ts';
import { envelopeTransition } from '../state.ts';
import { announceTurn, startNextTurn } from '../turns.ts';
import type { TemplatesClient } from '../templates-client.ts';
import { ENVELOPE_INCLUDE, toEnvelopeView } from '../views.ts';

export interface RenderDeps {
  db: Db;
  store: FileStore;
  templates: TemplatesClient;
  clock: () => Date;
  log: Logger;
}

/** Retries of a failed render: quick at first, then every ten minutes until the envelope expires or is voided. */
export const RENDER_RETRY_DELAYS_MS = [2_000, 10_000, 60_000, 300_000, 600_000] as const;

/**
 * Renders an envelope's original and sends it: the template version's PDF with its variables filled in, the form
 * flattened, TEST across test-mode pages; stored, then, in one transaction, `rendering` becomes `sent`, the first turn's
 * recipients become `sent`, and `envelope.ready` and `recipient.sent` go out. A failure is recorded on the envelope
 * (`renderError`, visible in the API) and thrown so the job is retried; nothing is half-sent.
 */
export async function renderEnvelope(deps: RenderDeps, envelopeId: string): Promise<void> {
  const row = await deps.db.envelope.findUnique({ where: { id: envelopeId }, include: ENVELOPE_INCLUDE });
  if (!row || row.status !== 'rendering') return;
  try {
    const caller = { organizationId: row.organizationId, mode: row.testMode ? ('test' as const) : ('live' as const) };
    const source = await deps.templates.document(caller, row.templateId, row.templateVersion);
    const pdf = await renderOriginal(source, row.fields as unknown as TemplateField[], row.variables as Record<string, string>, row.testMode);
    const key = `${row.organizationId}/${row.id}/original.pdf`;
    await deps.store.put(key, pdf, 'application/pdf');
    await deps.db.$transaction((tx) => markSent(tx, deps.clock(), row.id, key, createHash('sha256').update(pdf).digest('hex')));
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    await deps.db.envelope.updateMany({ where: { id: envelopeId, status: 'rendering' }, data: { renderAttempts: { increment: 1 }, renderError: message.slice(0, 1000) } });
    throw error;
  }
}

async function markSent(tx: Tx, now: Date, id: string, key: string, sha256: string): Promise<void> {
  const row = await lockEnvelope(tx, { id });
  // Voided or expired while rendering: the stored document stays unused.
  if (row.status !== 'rendering') return;
  const status = envelopeTransition(row.status, 'rendered', `Envelope ${id}`);
  const { started } = await startNextTurn(tx, row, now);
  const updated = await tx.envelope.update({
    where: { id },
    data: { status, originalKey: key, originalSha256: sha256, sentAt: now, renderError: null },
    include: ENVELOPE_INCLUDE,
  });
  const envelope = toEnvelopeView(updated);
  await enqueueEvent(tx, { type: 'envelope.ready', organizationId: row.organizationId, data: { envelopeId: id, testMode: row.testMode, envelope } });
  await announceTurn(tx, row, envelope, started);
}

function decodeRenderJob(payload: unknown): { id: string; envelopeId: string } {
  const job = payload as { id?: unknown; envelopeId?: unknown } | null;
  if (typeof job?.id !== 'string' || typeof job.envelopeId !== 'string' || !/^env_[A-Za-z0-9]{10,40}$/.test(job.envelopeId)) {
    throw new Error('not a render job: { id, envelopeId } expected');
  }
  return { id: job.id, envelopeId: job.envelopeId };
}

/** The render jobs of every replica share one durable consumer on the jobs stream. */
export function startRenderConsumer(bus: Bus, deps: RenderDeps, options: { cell?: string; concurrency?: number; retryDelaysMs?: readonly number[] } = {}): Promise<RunningConsumer> {
  return bus.consume({
    stream: JOBS_STREAM,
    durable: `${options.cell ?? ''}envelopes-render`,
    subjects: [jobSubject(renderJobName(options.cell))],
    concurrency: options.concurrency ?? 2,
    maxDeliver: 1000,
    retryDelaysMs: options.retryDelaysMs ?? RENDER_RETRY_DELAYS_MS,
    log: deps.log,
    decode: decodeRenderJob,
    handle: async (message) => {
      deps.log.info({ envelopeId: message.data.envelopeId, attempt: message.deliveryCount }, 'rendering envelope');
      await renderEnvelope(deps, message.data.envelopeId);
    },
  });
}
