import { unexpectedAnswer, type createServiceClient } from '@sigil/kit/auth';
import { isDependencyUnavailable } from '@sigil/kit/http';
import { decodeDomainEvent, type Bus, type RunningConsumer } from '@sigil/kit/bus';
import type { Logger } from '@sigil/kit/log';
import { EVENTS_STREAM, eventSubject, type DomainEvent } from '@sigil/proto/events';
import { createHash } from 'node:crypto';
import { certificateDocumentPath, completedDocumentPath, sealedDocumentPath, sealFailurePath } from '@sigil/proto/internal-envelopes';
import type { AuditItem } from '@sigil/proto/audit-chain';
import type { Db } from '../db.ts';
import { appendToLog, type LogEntry } from '../log/store.ts';
import { buildCertificate, type CertificateInput } from './certificate.ts';
import type { Sealer } from './sealer.ts';

export interface SealDeps {
  db: Db;
  sealer: Sealer;
  /** Calls the envelopes service's internal routes as evidence. */
  envelopes: ReturnType<typeof createServiceClient>;
  log: Logger;
  /** Where the public reaches Sigil: the certificate links (and QR-codes) its verification page. */
  publicUrl?: string;
  /** After this many failed attempts the envelope's `seal` becomes `failed`; retries go on. */
  failedAfter?: number;
  clock?: () => Date;
}

/** Retries of a seal that failed: quick first, then every ten minutes, then hourly (up to `maxDeliver`). */
export const SEAL_RETRY_DELAYS_MS = [2_000, 10_000, 60_000, 300_000, 600_000, 3_600_000] as const;
export const SEAL_FAILED_AFTER = 4;

type CompletedData = { envelopeId: string; testMode: boolean; envelope: CertificateInput['envelope'] };
const sha256Of = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/**
 * Seals a completed envelope: its completed document from envelopes, a PAdES signature, a certificate of completion
 * signed the same way; both enter the transparency log of the envelope's mode, then go to envelopes (certificate
 * first), which keeps them, sets `seal: sealed` and publishes `envelope.sealed`. An envelope already sealed is left as
 * it is, so a redelivery is harmless.
 */
export async function sealEnvelope(deps: SealDeps, event: DomainEvent): Promise<void> {
  const { envelopeId, testMode, envelope } = event.data as unknown as CompletedData;
  const caller = { organizationId: event.organizationId, mode: testMode ? ('test' as const) : ('live' as const) };
  const now = (deps.clock ?? (() => new Date()))();
  const record = await deps.db.seal.upsert({
    where: { envelopeId },
    create: { envelopeId, organizationId: event.organizationId, testMode, status: 'pending', attempts: 1 },
    update: { attempts: { increment: 1 }, updatedAt: now },
  });
  if (record.status === 'sealed') return;
  try {
    const { sealed, certificate } = record.sealedPdf && record.certificatePdf ? { sealed: Buffer.from(record.sealedPdf), certificate: Buffer.from(record.certificatePdf) } : await makeDocuments(deps, event, now);
    const leaf = (document: LogEntry['document'], bytes: Buffer): LogEntry => ({
      envelopeId, organizationId: event.organizationId, document, sha256: sha256Of(bytes), sealedAt: now.toISOString(), completedAt: envelope.completedAt ?? null, testMode,
    });
    // In the log before anyone can download them, so a verify of a document just served never misses. The log skips a
    // document it has (by SHA-256): a retry with the kept bytes adds nothing.
    await appendToLog(deps.db, testMode ? 'test' : 'live', [leaf('sealed', sealed), leaf('certificate', certificate)]);
    await hand(deps, certificateDocumentPath(envelopeId), caller, certificate, `the certificate of ${envelopeId}`);
    await hand(deps, sealedDocumentPath(envelopeId), caller, sealed, `the sealed document of ${envelopeId}`);
    await deps.db.seal.update({ where: { envelopeId }, data: { status: 'sealed', lastError: null, sealedSha256: sha256Of(sealed), certificateSha256: sha256Of(certificate), sealedPdf: null, certificatePdf: null, updatedAt: now } });
  } catch (error) {
    if (error instanceof EnvelopeUnknown) {
      // Envelopes publishes a completion only after its row committed, so this one is not of this deployment (stacks
      // that share a broker, as test stacks do): nothing to seal, now or on a retry.
      await deps.db.seal.delete({ where: { envelopeId } });
      deps.log.warn({ envelopeId, organizationId: event.organizationId }, 'envelopes does not know this completed envelope: not sealed');
      return;
    }
    const outage = isDependencyUnavailable(error);
    await recordFailure(deps, { envelopeId, caller, attempts: record.attempts, status: record.status, outage, reason: (error as Error)?.message ?? String(error) });
    throw error;
  }
}

/**
 * Seals the completed document and makes the certificate, and keeps both on the seal's row before they go anywhere:
 * an attempt that fails after logging them is retried with these bytes (a new seal would differ by its time), so the
 * log gets two leaves per envelope and envelopes one sealed document.
 */
async function makeDocuments(deps: SealDeps, event: DomainEvent, now: Date): Promise<{ sealed: Buffer; certificate: Buffer }> {
  const { envelopeId, testMode, envelope } = event.data as unknown as CompletedData;
  const caller = { organizationId: event.organizationId, mode: testMode ? ('test' as const) : ('live' as const) };
  const source = await deps.envelopes(completedDocumentPath(envelopeId), { ...caller, timeoutMs: 30_000 });
  if (source.status === 404) throw new EnvelopeUnknown(envelopeId);
  if (!source.ok) throw await unexpectedAnswer('envelopes', source, `the completed document of ${envelopeId}`);
  const completed = Buffer.from(await source.arrayBuffer());
  const sealed = await deps.sealer.seal(completed, `Sealed by Sigil: envelope ${envelopeId} completed`);
  const entries = (await deps.db.auditEvent.findMany({ where: { envelopeId }, orderBy: { seq: 'asc' } })) as unknown as AuditItem[];
  const certificate = await deps.sealer.seal(
    await buildCertificate({ envelope, documentSha256: sha256Of(completed), sealedSha256: sha256Of(sealed), verifyUrl: deps.publicUrl ? new URL(`/verify#sha256=${sha256Of(sealed)}`, deps.publicUrl).toString() : undefined, entries }),
    `Certificate of completion of envelope ${envelopeId}`,
  );
  await deps.db.seal.update({ where: { envelopeId }, data: { sealedPdf: new Uint8Array(sealed), certificatePdf: new Uint8Array(certificate), updatedAt: now } });
  return { sealed, certificate };
}

/** Envelopes answered 404 for the completed document: the envelope does not exist there. */
class EnvelopeUnknown extends Error {
  constructor(envelopeId: string) {
    super(`envelopes does not know envelope ${envelopeId}`);
  }
}

async function hand(deps: SealDeps, path: string, caller: { organizationId: string; mode: 'live' | 'test' }, pdf: Buffer, what: string): Promise<void> {
  const answer = await deps.envelopes(path, { ...caller, method: 'PUT', body: pdf, contentType: 'application/pdf', timeoutMs: 30_000 });
  if (answer.status !== 204) throw await unexpectedAnswer('envelopes', answer, what);
}

/**
 * Keeps the reason; once the quick retries are spent the envelope's `seal` becomes `failed` (told once). A dependency
 * that is down (envelopes restarting, the database) is not the seal failing: it is retried soon and never shown as
 * `failed`.
 */
async function recordFailure(deps: SealDeps, failure: { envelopeId: string; caller: { organizationId: string; mode: 'live' | 'test' }; attempts: number; status: string; outage: boolean; reason: string }): Promise<void> {
  const failed = !failure.outage && failure.attempts >= (deps.failedAfter ?? SEAL_FAILED_AFTER);
  await deps.db.seal.update({ where: { envelopeId: failure.envelopeId }, data: { lastError: failure.reason.slice(0, 1000), ...(failed ? { status: 'failed' } : {}) } });
  if (!failed || failure.status === 'failed') return;
  try {
    const told = await deps.envelopes(sealFailurePath(failure.envelopeId), { ...failure.caller, method: 'PUT', json: { reason: `Sealing failed after ${failure.attempts} attempts (retrying): ${failure.reason}` } });
    if (told.status !== 204) throw new Error(`envelopes answered ${told.status}`);
  } catch (error) {
    // Told again at the next failure: the row goes back to pending-but-failing until envelopes hears it.
    await deps.db.seal.update({ where: { envelopeId: failure.envelopeId }, data: { status: 'pending' } });
    deps.log.warn({ err: error, envelopeId: failure.envelopeId }, 'could not mark the seal failed');
  }
}

export function startSealConsumer(bus: Bus, deps: SealDeps, options: { prefix?: string; retryDelaysMs?: readonly number[] } = {}): Promise<RunningConsumer> {
  return bus.consume<DomainEvent>({
    stream: EVENTS_STREAM,
    durable: `${options.prefix ?? ''}evidence-seal`,
    subjects: [eventSubject('envelope.completed')],
    log: deps.log,
    decode: decodeDomainEvent,
    maxDeliver: 1000,
    retryDelaysMs: options.retryDelaysMs ?? SEAL_RETRY_DELAYS_MS,
    handle: async ({ data, deliveryCount }) => {
      deps.log.info({ envelopeId: (data.data as { envelopeId: string }).envelopeId, attempt: deliveryCount }, 'sealing envelope');
      await sealEnvelope(deps, data);
    },
  });
}
