import { PDFDocument, StandardFonts } from 'pdf-lib';
import type { LoadClient } from './load-client.ts';

/** How a signer drives an envelope, and so the state it must end in. */
export type Intent = 'completed' | 'declined' | 'voided';

export interface EnvelopeRun {
  externalId: string;
  /** The organization that sent it. */
  setup: EnvelopeSetup;
  intent: Intent;
  id?: string;
  /** Why the flow could not be driven to its end (an answer outside what the load expects). */
  error?: string;
}

export interface EnvelopeSetup {
  /** The live key that sends (usage counts live envelopes). */
  sender: Record<string, string>;
  /** The owner's session (billing's usage answers sessions and billing:manage keys). */
  owner: Record<string, string>;
  templateId: string;
  endpointId: string;
  webhookSecret: string;
}

/** A new organization (its own usage and its own 100 included envelopes), a live key, a template and a webhook endpoint. */
export async function setUpEnvelopes(client: LoadClient, receiverUrl: string, label: string): Promise<EnvelopeSetup> {
  const email = `faults-${label}-${Date.now()}@example.com`;
  const signUp = await client.send('POST', '/v1/auth/sign-up', { body: { organizationName: `Faults ${label}`, name: 'Fault Owner', email, password: 'correct horse battery staple' } });
  const owner = { cookie: (signUp.headers.getSetCookie().find((c) => c.startsWith('sigil_session=')) ?? '').split(';')[0]! };
  const key = await client.send('POST', '/v1/api-keys', { headers: owner, body: { name: 'faults sender', mode: 'live' } });
  const sender = { authorization: `Bearer ${key.body.secret}` };
  const endpoint = await client.send('POST', '/v1/webhook-endpoints', { headers: owner, body: { url: receiverUrl, description: 'faults receiver' } });
  const templateId = await publishTemplate(client, sender);
  return { sender, owner, templateId, endpointId: endpoint.body.id, webhookSecret: endpoint.body.secret };
}

async function publishTemplate(client: LoadClient, headers: Record<string, string>): Promise<string> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  doc.addPage([612, 792]).drawText('Faults under load', { x: 50, y: 740, size: 14, font });
  const templateId = (await client.send('POST', '/v1/templates', { headers, body: { name: 'Faults under load' } })).body.id as string;
  const upload = await fetch(`${client.base}/v1/templates/${templateId}/files`, { method: 'POST', headers: { ...headers, 'content-type': 'application/pdf' }, body: Buffer.from(await doc.save()) });
  if (upload.status !== 201) throw new Error(`template file upload answered ${upload.status}`);
  const file = ((await upload.json()) as { id: string }).id;
  await client.send('PUT', `/v1/templates/${templateId}/draft`, {
    headers,
    body: { file, roles: [{ name: 'client', order: 1 }], fields: [{ id: 'signature', role: 'client', type: 'signature', required: true, page: 1, x: 72, y: 600, width: 200, height: 40 }], variables: [] },
  });
  await client.send('POST', `/v1/templates/${templateId}/publish`, { headers });
  return templateId;
}

export function intentOf(index: number): Intent {
  return (['completed', 'completed', 'completed', 'declined', 'voided'] as const)[index % 5]!;
}

const terminal = (status: string) => ['completed', 'declined', 'voided', 'expired'].includes(status);

/**
 * One envelope from creation to the end its signer chooses. Creation is deduplicated on the external id, so sending
 * it again after a lost answer never makes a second envelope; a signing token whose exchange answer was lost is
 * replaced by a new session; a submit or decline whose answer was lost is read back from the envelope.
 */
export async function driveEnvelope(client: LoadClient, setup: EnvelopeSetup, run: EnvelopeRun): Promise<void> {
  const headers = setup.sender;
  const created = await client.send('POST', '/v1/envelopes', {
    headers,
    body: { template: setup.templateId, recipients: [{ role: 'client', name: 'Load Signer', email: `${run.externalId}@example.com` }], externalId: run.externalId, dedupeOn: 'external_id' },
  });
  const id = created.body.id as string;
  run.id = id;
  const sent = await client.until<{ status: string; recipients: Array<{ id: string }> }>(`/v1/envelopes/${id}`, headers, (e) => e.status === 'sent');
  if (run.intent === 'voided') {
    await client.send('POST', `/v1/envelopes/${id}/void`, { headers, body: { reason: 'load: voided' }, accept: (s) => s === 200 || s === 409 });
    await client.until<{ status: string }>(`/v1/envelopes/${id}`, headers, (e) => terminal(e.status));
    return;
  }
  const recipient = sent.recipients[0]!.id;
  for (let tries = 0; ; tries++) {
    const minted = await client.send('POST', `/v1/envelopes/${id}/sessions`, { headers, body: { recipient } });
    const exchanged = await client.send('POST', '/v1/signing/exchange', { body: { token: minted.body.token }, accept: (s) => s === 200 || s === 401 });
    if (exchanged.status === 401) {
      // The exchange happened but its answer was lost (the token is single-use): a new session.
      if (tries >= 5) throw new Error(`signing token of ${id} refused ${tries + 1} times`);
      continue;
    }
    const signer = { authorization: `Bearer ${exchanged.body.accessToken}` };
    await client.send('GET', '/v1/signing/session', { headers: signer });
    // Sent again after a lost answer, the step is refused (409, or 401 once the session ended with it): the envelope's
    // state read below says whether it happened.
    const repeated = (s: number) => s === 200 || s === 401 || s === 409;
    if (run.intent === 'completed') await client.send('POST', '/v1/signing/submit', { headers: signer, body: { fields: { signature: { kind: 'typed', text: 'Load Signer' } }, consent: true }, accept: repeated });
    else await client.send('POST', '/v1/signing/decline', { headers: signer, body: { reason: 'load: declined' }, accept: repeated });
    break;
  }
  const done = await client.until<{ status: string; seal: string }>(`/v1/envelopes/${id}`, headers, (e) => terminal(e.status) && (e.status !== 'completed' || e.seal === 'sealed' || e.seal === 'failed'), 180_000);
  if (done.status !== run.intent) run.error = `ended ${done.status}, its signer drove it to ${run.intent}`;
}

/**
 * Runs envelope flows, `parallel` at a time, while `keepGoing(index)` holds and at most `count`, each recorded in `runs` as it starts. An organization sends at most
 * `perOrganization` of them (the free plan includes 100 live envelopes a month): `organization(n)` makes the n-th.
 */
export async function runEnvelopeLoad(client: LoadClient, organization: (n: number) => Promise<EnvelopeSetup>, options: { count: number; keepGoing: (index: number) => boolean; parallel: number; perOrganization: number; prefix: string; runs: EnvelopeRun[] }): Promise<void> {
  const organizations = new Map<number, Promise<EnvelopeSetup>>();
  const setupOf = (index: number) => {
    const n = Math.floor(index / options.perOrganization);
    if (!organizations.has(n)) organizations.set(n, organization(n));
    return organizations.get(n)!;
  };
  let next = 0;
  const worker = async () => {
    while (next < options.count && options.keepGoing(next)) {
      const index = next++;
      const run: EnvelopeRun = { externalId: `${options.prefix}-${index}`, intent: intentOf(index), setup: await setupOf(index) };
      options.runs.push(run);
      await driveEnvelope(client, run.setup, run).catch((error: unknown) => (run.error = (error as Error).message));
    }
  };
  await Promise.all(Array.from({ length: options.parallel }, worker));
}
