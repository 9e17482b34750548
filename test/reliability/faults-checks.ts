import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { verifyChain, type AuditItem } from '@sigil/proto/audit-chain';
import type { FaultStack } from './faults-stack.ts';
import type { LoadClient } from './load-client.ts';
import type { EnvelopeRun } from './load-envelopes.ts';
import type { FlakyReceiver } from './load-webhooks.ts';

/**
 * What must hold once the faults are over and the platform has settled: each check answers the problems it found
 * (an empty list when none), so one failing assertion prints all of them.
 */

/** Consumers of every JetStream stream with messages not yet delivered or delivered and not acknowledged. */
export async function jetStreamBacklog(natsUrl: string): Promise<Array<{ stream: string; consumer: string; pending: number; ackPending: number }>> {
  const nc = await connect({ servers: natsUrl, name: 'faults-check' });
  try {
    const jsm = await jetstreamManager(nc);
    const found: Array<{ stream: string; consumer: string; pending: number; ackPending: number }> = [];
    for await (const stream of jsm.streams.list()) {
      for await (const consumer of jsm.consumers.list(stream.config.name)) {
        found.push({ stream: stream.config.name, consumer: consumer.name, pending: consumer.num_pending, ackPending: consumer.num_ack_pending });
      }
    }
    return found;
  } finally {
    await nc.close();
  }
}

/** Files left under the mover's work folder (its job folders are removed when their jobs end). */
export function filesUnder(dir: string): string[] {
  const found: string[] = [];
  const walk = (at: string) => {
    for (const entry of readdirSync(at)) {
      const full = path.join(at, entry);
      if (statSync(full).isDirectory()) walk(full);
      else found.push(path.relative(dir, full));
    }
  };
  walk(dir);
  return found;
}

/** The envelope's trail, every page, checked as a hash chain here (not only by the service's own `chain.valid`). */
async function trailOf(client: LoadClient, run: EnvelopeRun): Promise<AuditItem[]> {
  const items: AuditItem[] = [];
  let cursor: string | null = null;
  do {
    const page: { body: { data: AuditItem[]; nextCursor: string | null } } = await client.send('GET', `/v1/envelopes/${run.id}/events?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { headers: run.setup.sender });
    items.push(...page.body.data);
    cursor = page.body.nextCursor;
  } while (cursor);
  return items;
}

/**
 * Waits, at most `ms`, until each envelope is in the state its signer drove it to and, if completed, sealed: a render
 * or seal interrupted by the last fault is retried a few seconds after its dependency is back (kit/bus/outage.ts).
 * Answers the ids still unsettled; `envelopeProblems` then says what is wrong with them.
 */
export async function waitForEnvelopesToSettle(client: LoadClient, runs: EnvelopeRun[], ms: number): Promise<string[]> {
  let open = runs.filter((r) => r.id && !r.error);
  const deadline = Date.now() + ms;
  while (open.length > 0 && Date.now() < deadline) {
    const still: EnvelopeRun[] = [];
    for (const run of open) {
      const envelope = (await client.send('GET', `/v1/envelopes/${run.id}`, { headers: run.setup.sender })).body as { status?: string; seal?: string };
      if (envelope.status !== run.intent || (run.intent === 'completed' && envelope.seal !== 'sealed')) still.push(run);
    }
    open = still;
    if (open.length > 0) await new Promise((resolve) => setTimeout(resolve, 2_000));
  }
  return open.map((r) => r.id as string);
}

/** Each envelope in the state its signer drove it to, one per external id, its trail a valid chain, completed ones sealed once. */
export async function envelopeProblems(client: LoadClient, faults: FaultStack, runs: EnvelopeRun[]): Promise<string[]> {
  const problems: string[] = [];
  for (const run of runs) {
    if (run.error) problems.push(`${run.externalId}: ${run.error}`);
    if (!run.id) continue;
    const envelope = (await client.send('GET', `/v1/envelopes/${run.id}`, { headers: run.setup.sender })).body;
    if (envelope.status !== run.intent) problems.push(`${run.externalId} (${run.id}) is ${envelope.status}, not ${run.intent}`);
    const trail = await trailOf(client, run);
    const chain = verifyChain(trail);
    if (!chain.valid) problems.push(`${run.id}: audit chain broken at seq ${chain.firstInvalidSeq}`);
    const count = (type: string) => trail.filter((e) => e.type === type).length;
    for (const once of ['envelope.created', 'envelope.ready']) if (count(once) !== 1) problems.push(`${run.id}: ${count(once)} ${once} entries`);
    const ending = { completed: 'envelope.completed', declined: 'envelope.declined', voided: 'envelope.voided' }[run.intent];
    if (count(ending) !== 1) problems.push(`${run.id}: ${count(ending)} ${ending} entries`);
    if (run.intent === 'completed') {
      if (envelope.seal !== 'sealed') problems.push(`${run.id}: seal ${envelope.seal}`);
      if (count('envelope.sealed') !== 1) problems.push(`${run.id}: ${count('envelope.sealed')} envelope.sealed entries`);
      // A second seal would add two more leaves (its sealed document and certificate) to the transparency log.
      const leaves = await faults.sql<{ n: number }>('sigil_evidence', 'SELECT count(*)::int AS n FROM log_leaves WHERE envelope_id = $1', [run.id]);
      if (leaves[0]!.n !== 2) problems.push(`${run.id}: ${leaves[0]!.n} transparency-log leaves, not 2`);
    } else if (count('envelope.sealed') !== 0) problems.push(`${run.id}: sealed though ${run.intent}`);
  }
  const byExternalId = await faults.sql<{ external_id: string; n: number }>('sigil_envelopes', 'SELECT external_id, count(*)::int AS n FROM envelopes WHERE external_id = ANY($1) GROUP BY external_id', [runs.map((r) => r.externalId)]);
  for (const row of byExternalId) if (row.n !== 1) problems.push(`${row.n} envelopes with external id ${row.external_id}`);
  return problems;
}

/**
 * Every event the webhooks service recorded for the load's endpoints: one delivery each, succeeded, and received; the
 * receiver got nothing the service did not record, no event was recorded twice for one envelope, and each envelope's
 * trail event types were all delivered.
 */
export async function webhookProblems(faults: FaultStack, receiver: FlakyReceiver, endpointIds: string[], runs: EnvelopeRun[]): Promise<{ problems: string[]; events: number }> {
  const problems = receiver.unverified.map((u) => `unverified delivery ${u}`);
  const deliveries = await faults.sql<{ event_id: string; event_type: string; status: string; body: string }>(
    'sigil_webhooks',
    'SELECT d.event_id, d.event_type, d.status, e.body FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id WHERE d.endpoint_id = ANY($1)',
    [endpointIds],
  );
  const perEvent = new Map<string, number>();
  for (const d of deliveries) perEvent.set(d.event_id, (perEvent.get(d.event_id) ?? 0) + 1);
  for (const [id, n] of perEvent) if (n !== 1) problems.push(`event ${id} has ${n} deliveries to one endpoint`);
  for (const d of deliveries) {
    if (d.status !== 'succeeded') problems.push(`event ${d.event_id} (${d.event_type}) delivery ${d.status}`);
    if (!receiver.events.get(d.event_id)?.accepted) problems.push(`event ${d.event_id} (${d.event_type}) never received`);
  }
  for (const id of receiver.events.keys()) if (!perEvent.has(id)) problems.push(`received ${id}, which the service did not record`);
  // One recorded event per domain event: the same (type, envelope) twice is a duplicate (the load's envelopes have one
  // recipient each; only a view may happen twice, when a signing session had to be opened again).
  const seen = new Map<string, number>();
  for (const d of deliveries) {
    const envelopeId = (JSON.parse(d.body) as { data?: { envelope?: { id?: string } } }).data?.envelope?.id;
    const key = `${d.event_type} ${envelopeId}`;
    seen.set(key, (seen.get(key) ?? 0) + 1);
  }
  for (const [key, n] of seen) if (n !== 1 && !key.startsWith('recipient.viewed ')) problems.push(`${n} events recorded for ${key}`);
  for (const run of runs.filter((r) => r.id)) {
    for (const type of ['envelope.created', 'envelope.ready', 'recipient.sent', `envelope.${run.intent}`, ...(run.intent === 'completed' ? ['envelope.sealed'] : [])]) {
      if (!seen.has(`${type} ${run.id}`)) problems.push(`${run.id}: no ${type} event delivered`);
    }
  }
  return { problems, events: perEvent.size };
}

/** Billing's usage of each organization: its completed live envelopes, each counted once. */
export async function usageProblems(client: LoadClient, runs: EnvelopeRun[]): Promise<string[]> {
  const problems: string[] = [];
  for (const setup of new Set(runs.map((r) => r.setup))) {
    const completed = runs.filter((r) => r.setup === setup && r.intent === 'completed' && r.id).length;
    const usage = await client.until<{ completedEnvelopes: number }>('/v1/usage', setup.owner, (u) => u.completedEnvelopes >= completed, 30_000).catch((error: Error) => ({ completedEnvelopes: Number.NaN, error }));
    if (usage.completedEnvelopes !== completed) problems.push(`usage counts ${usage.completedEnvelopes} completed envelopes, the load completed ${completed}`);
  }
  return problems;
}
