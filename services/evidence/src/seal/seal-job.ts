import { PRINCIPAL_HEADER, type PrincipalSigner } from '@sigil/kit/auth';
import { decodeDomainEvent, type Bus, type RunningConsumer } from '@sigil/kit/bus';
import type { Logger } from '@sigil/kit/log';
import { EVENTS_STREAM, eventSubject, type DomainEvent } from '@sigil/proto/events';
import { createHash } from 'node:crypto';
import { certificateDocumentPath, completedDocumentPath, sealedDocumentPath } from '@sigil/proto/internal-envelopes';
import type { AuditItem } from '@sigil/proto/audit-chain';
import type { Db } from '../db.ts';
import { buildCertificate, type CertificateInput } from './certificate.ts';
import type { Sealer } from './sealer.ts';

export interface SealDeps {
  db: Db;
  sealer: Sealer;
  envelopesUrl: string;
  signPrincipal: PrincipalSigner;
  log: Logger;
  fetch?: typeof fetch;
}

/** Retries of a seal that failed: quick first, then every ten minutes (the envelope stays `pending` meanwhile). */
export const SEAL_RETRY_DELAYS_MS = [2_000, 10_000, 60_000, 300_000, 600_000] as const;

/**
 * Seals a completed envelope: its completed document from envelopes, a PAdES signature, the sealed PDF back to
 * envelopes (which keeps it, sets `seal: sealed` and publishes `envelope.sealed`). Sealing the same envelope again
 * changes nothing, so a redelivery is harmless.
 */
export async function sealEnvelope(deps: SealDeps, event: DomainEvent): Promise<void> {
  const { envelopeId, testMode } = event.data as { envelopeId: string; testMode: boolean };
  const doFetch = deps.fetch ?? fetch;
  const headers = { [PRINCIPAL_HEADER]: await deps.signPrincipal({ kind: 'service', organizationId: event.organizationId, actorId: 'evidence', mode: testMode ? 'test' : 'live', permissions: [] }) };
  const source = await doFetch(new URL(completedDocumentPath(envelopeId), deps.envelopesUrl), { headers, signal: AbortSignal.timeout(30_000) });
  if (!source.ok) throw new Error(`envelopes answered ${source.status} for the completed document of ${envelopeId}`);
  const completed = Buffer.from(await source.arrayBuffer());
  // The certificate first: once `seal` is `sealed`, both documents are there.
  const entries = (await deps.db.auditEvent.findMany({ where: { envelopeId }, orderBy: { seq: 'asc' } })) as unknown as AuditItem[];
  const certificate = await buildCertificate({ envelope: (event.data as { envelope: CertificateInput['envelope'] }).envelope, documentSha256: createHash('sha256').update(completed).digest('hex'), entries });
  const signedCertificate = await deps.sealer.seal(certificate, `Certificate of completion of envelope ${envelopeId}`);
  const filed = await doFetch(new URL(certificateDocumentPath(envelopeId), deps.envelopesUrl), { method: 'PUT', headers: { ...headers, 'content-type': 'application/pdf' }, body: signedCertificate, signal: AbortSignal.timeout(30_000) });
  if (filed.status !== 204) throw new Error(`envelopes answered ${filed.status} when handed the certificate of ${envelopeId}`);
  const sealed = await deps.sealer.seal(completed, `Sealed by Sigil: envelope ${envelopeId} completed`);
  const kept = await doFetch(new URL(sealedDocumentPath(envelopeId), deps.envelopesUrl), { method: 'PUT', headers: { ...headers, 'content-type': 'application/pdf' }, body: sealed, signal: AbortSignal.timeout(30_000) });
  if (kept.status !== 204) throw new Error(`envelopes answered ${kept.status} when handed the sealed document of ${envelopeId}`);
}

export function startSealConsumer(bus: Bus, deps: SealDeps, prefix = ''): Promise<RunningConsumer> {
  return bus.consume<DomainEvent>({
    stream: EVENTS_STREAM,
    durable: `${prefix}evidence-seal`,
    subjects: [eventSubject('envelope.completed')],
    log: deps.log,
    decode: decodeDomainEvent,
    maxDeliver: 1000,
    ackWaitMs: 120_000,
    retryDelaysMs: SEAL_RETRY_DELAYS_MS,
    handle: async ({ data, deliveryCount }) => {
      deps.log.info({ envelopeId: (data.data as { envelopeId: string }).envelopeId, attempt: deliveryCount }, 'sealing envelope');
      await sealEnvelope(deps, data);
    },
  });
}
