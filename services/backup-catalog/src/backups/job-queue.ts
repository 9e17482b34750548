/** The catalog's side of the job queue: run ids, and sealed jobs put in the outbox with the caller's transaction. */
import { randomBytes } from 'node:crypto';
import { seal } from '@sigil/kit/crypto';
import { strataJobSubject, type SealedJob } from '@sigil/proto/strata-jobs';
import { assertStrataJob } from '@sigil/proto/strata-wire';
import type { DbOrTx } from '../db.ts';

/** Ids of backups and restores: sortable and unique, the UTC time of the request, then randomness. */
export function newRunId(now: Date): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'z').toLowerCase();
  return `${stamp}-${randomBytes(4).toString('hex')}`;
}

/** Puts a sealed job in the outbox, in the caller's transaction; the relay publishes it after commit. */
export async function enqueueJob(tx: DbOrTx, key: Buffer, header: { id: string; type: SealedJob['type']; cell: string }, job: unknown): Promise<void> {
  // A job that does not match proto/jobs is a bug here: fail the caller's transaction rather than send it.
  assertStrataJob(header.type, job);
  const message: SealedJob = { id: header.id, type: header.type, sealed: seal(key, JSON.stringify(job), header.type) };
  await tx.$executeRawUnsafe(
    `INSERT INTO outbox_events (id, subject, payload) VALUES ($1, $2, $3::jsonb) ON CONFLICT (id) DO NOTHING`,
    header.id,
    strataJobSubject(header.type, header.cell),
    JSON.stringify(message),
  );
  await tx.$executeRawUnsafe(`SELECT pg_notify('outbox_events', '')`);
}
