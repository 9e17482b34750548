import { generateAgeIdentity } from '@strata/stream/age';
import { loadSigilOpenApi } from '@sigil/proto';
import { call, createKey, publishOneRoleTemplate, signIn, signUp, until, type TestStack } from '../e2e/stack.ts';
import type { OperationSpec, RequestContext } from './fuzz-requests.ts';

/**
 * What the fuzz run sends with: credentials for every kind of caller and a few real resources, so that generated
 * requests also reach the code behind "found" (real ids are mixed into the path parameters).
 *
 * Operations with side effects on what the rest of the run uses get their own throwaway credential or resource:
 * - signOut revokes the session it is called with: it gets a session of its own (the owner signed in once more);
 * - revokeApiKey is mixed only ids of two throwaway keys, never the key the run sends with;
 * - deleteTemplate, deleteWebhookEndpoint, voidEnvelope, revokeEnvelopeViewer (no real viewer id: the one viewer is
 *   the one the run sends with), submitSigning and
 *   declineSigning are mixed only ids of their own throwaway resources (a second template, endpoint, envelope; signing links are not on the seeded Free plan, so none is seeded);
 * - member, invitation, SCIM and billing operations (updateMember, removeMember, createInvitation, revokeInvitation,
 *   listInvitations, createScimToken, revokeScimToken, createBillingCheckout, createBillingPortalSession) run in a
 *   throwaway organization of their own, signed up for the run, so a demoted owner or a checkout never touches the
 *   organization everything else uses;
 * - Strata's deleteResource and deleteSecret are mixed only a throwaway target and secret.
 * Heavy work is bounded: backupNow, createRestore, createSandbox, resetSandbox and collectStoreGarbage are never mixed
 * a real target, store or sandbox (the seeded target is suspended and points at a closed port anyway), so no fuzzed
 * request starts a real backup, restore, sandbox or garbage collection.
 */
export interface FuzzWorld {
  sigil: (spec: OperationSpec) => RequestContext;
  strata: (spec: OperationSpec) => RequestContext;
  /** Secrets the run sends with, by the placeholder a printed `curl` line shows instead. */
  secrets: Record<string, string>;
}

const STRATA_NS = 'default';
/** Every permission the contract knows: the key the run sends with may call every K operation. */
const PERMISSIONS = (loadSigilOpenApi().components?.schemas?.Permission as { enum: string[] }).enum;

export async function seedFuzzWorld(stack: TestStack): Promise<FuzzWorld> {
  const base = stack.gatewayUrl;
  const cookie = await signIn(base, stack.seed.ownerEmail, stack.seed.ownerPassword);
  const signOutCookie = await signIn(base, stack.seed.ownerEmail, stack.seed.ownerPassword);
  const key = await createKey(base, cookie, { name: 'fuzz: every permission', mode: 'test', scopes: PERMISSIONS });
  const doomedKeys = [await createKey(base, cookie, { name: 'fuzz: doomed 1', mode: 'test' }), await createKey(base, cookie, { name: 'fuzz: doomed 2', mode: 'test' })];
  const auth = { authorization: `Bearer ${key.secret}` };

  const templateId = await publishOneRoleTemplate(base, auth, 'Fuzz template', 'signer');
  const doomedTemplate = expectStatus(await call(base, 'POST', '/v1/templates', { headers: auth, body: { name: 'Fuzz doomed template' } }), 201).id as string;
  const recipients = (who: string) => [{ role: 'signer', name: 'Fuzz Signer', email: `${who}@example.com`, delivery: 'embedded' }];
  const since = new Date().toISOString();
  const envelope = expectStatus(await call(base, 'POST', '/v1/envelopes', { headers: auth, body: { template: templateId, recipients: recipients('fuzz-signer'), viewers: [{ email: stack.seed.ownerEmail }] } }), 201);
  const doomed = expectStatus(await call(base, 'POST', '/v1/envelopes', { headers: auth, body: { template: templateId, recipients: recipients('fuzz-doomed') } }), 201);
  const signerToken = await signerAccess(base, auth, envelope.id, envelope.recipients[0].id);
  const doomedSignerToken = await signerAccess(base, auth, doomed.id, doomed.recipients[0].id);
  const events = expectStatus(await call(base, 'GET', `/v1/envelopes/${envelope.id}/events`, { headers: auth }), 200);
  const eventIds = (events.data as Array<{ id?: unknown }>).map((e) => e.id).filter((id): id is string => typeof id === 'string' && id.startsWith('evt_'));

  const endpoint = expectStatus(await call(base, 'POST', '/v1/webhook-endpoints', { headers: auth, body: { url: 'http://127.0.0.1:9/fuzz', description: 'fuzz: discard port' } }), 201);
  const doomedEndpoint = expectStatus(await call(base, 'POST', '/v1/webhook-endpoints', { headers: auth, body: { url: 'http://127.0.0.1:9/doomed' } }), 201);

  const other = await signUp(base, `fuzz-throwaway-${Date.now()}@example.com`, 'Fuzz Throwaway Org');
  const members = expectStatus(await call(base, 'GET', '/v1/organization/members', { headers: { cookie: other.cookie } }), 200);
  // Seats may be plan-limited: a refused invitation only means no real invitation id to mix in.
  const invited = await call(base, 'POST', '/v1/organization/invitations', { headers: { cookie: other.cookie }, body: { email: 'fuzz-invitee@example.com', role: 'member' } });
  const invitationIds = invited.status === 201 ? [invited.body.id as string] : [];

  // Last: its e-mail has had the time the rest took. The viewer is the owner: test-mode mail goes to members only.
  const viewerToken = await viewerAccess(stack, stack.seed.ownerEmail, since);

  const strataToken = expectStatus(await call(base, 'POST', '/api/dev/token', { body: { email: 'fuzz@example.test', role: 'restorer-admin' } }), 200).token as string;
  await seedStrata(stack, strataToken);

  const secrets = {
    $API_KEY: key.secret,
    $SESSION_COOKIE: cookie.replace(/^sigil_session=/, ''),
    $SIGN_OUT_SESSION_COOKIE: signOutCookie.replace(/^sigil_session=/, ''),
    $THROWAWAY_ORG_SESSION_COOKIE: other.cookie.replace(/^sigil_session=/, ''),
    $SIGNER_TOKEN: signerToken,
    $THROWAWAY_SIGNER_TOKEN: doomedSignerToken,
    $VIEWER_TOKEN: viewerToken,
    $STRATA_TOKEN: strataToken,
  };

  const THROWAWAY_ORG = new Set(['updateMember', 'removeMember', 'createInvitation', 'revokeInvitation', 'listInvitations', 'createScimToken', 'revokeScimToken', 'createBillingCheckout', 'createBillingPortalSession']);
  const sigil = (spec: OperationSpec): RequestContext => {
    const auth = spec.operation['x-auth'] as string;
    const id = spec.operationId;
    const credential: Record<string, string> =
      auth === 'K' ? { authorization: `Bearer ${key.secret}` }
      : auth === 'D' ? { cookie: id === 'signOut' ? signOutCookie : THROWAWAY_ORG.has(id) ? other.cookie : cookie }
      : auth === 'S' ? { authorization: `Bearer ${id === 'submitSigning' || id === 'declineSigning' ? doomedSignerToken : signerToken}` }
      : auth === 'V' ? { authorization: `Bearer ${viewerToken}` }
      : {};
    const real: Record<string, string[]> = {};
    const p = spec.path;
    if (p.startsWith('/v1/templates/{id}')) real.id = [id === 'deleteTemplate' ? doomedTemplate : templateId];
    if (p.startsWith('/v1/templates/{id}/versions/{version}')) real.version = ['1', 'latest', 'draft'];
    if (p.startsWith('/v1/envelopes/{id}')) real.id = ['voidEnvelope', 'revokeEnvelopeViewer'].includes(id) ? [doomed.id] : [envelope.id];
    if (p.includes('{recipient}')) real.recipient = [envelope.recipients[0].id];
    if (p.startsWith('/v1/webhook-endpoints/{id}')) real.id = [id === 'deleteWebhookEndpoint' ? doomedEndpoint.id : endpoint.id];
    if (p.startsWith('/v1/events/{id}')) real.id = eventIds;
    if (p.startsWith('/v1/api-keys/{id}')) real.id = doomedKeys.map((k) => k.id);
    if (p.startsWith('/v1/organization/members/{id}')) real.id = (members.data as Array<{ id: string }>).map((m) => m.id);
    if (p.startsWith('/v1/organization/invitations/{id}')) real.id = invitationIds;
    if (p.includes('{organizationId}') || p.includes('{org}')) real.organizationId = real.org = [stack.seed.organizationId];
    if (id === 'streamViewerUpdates') real.access_token = [viewerToken];
    const realBodies: Record<string, unknown[]> = {
      createEnvelope: [{ template: templateId, recipients: recipients('fuzz-more') }],
      createSigningSession: [{ recipient: envelope.recipients[0].id }],
      submitSigning: [{ fields: { signature: { kind: 'typed', text: 'Fuzz Signer' } }, consent: true }],
      createSigningLink: [{ template: templateId }],
      renderTemplatePreview: [{}],
      verifyDocument: [{ sha256: '0'.repeat(64) }],
      signIn: [{ email: stack.seed.ownerEmail, password: 'not the password at all' }],
    };
    return { credential, real, realBodies: realBodies[id] };
  };

  const strataHeavy = new Set(['backupNow', 'createRestore', 'createSandbox', 'resetSandbox', 'collectStoreGarbage']);
  const strata = (spec: OperationSpec): RequestContext => {
    const real: Record<string, string[]> = {};
    if (!strataHeavy.has(spec.operationId)) {
      real.ns = [STRATA_NS];
      real.name = spec.operationId === 'deleteResource' ? ['fuzz-doomed'] : spec.operationId === 'deleteSecret' ? ['fuzz-doomed-secret'] : ['fuzz-target', 'fuzz-store', 'fuzz-credentials'];
      real.kind = ['BackupTarget', 'BackupStore', 'BackupPolicy', 'backuptarget'];
    }
    return { credential: { 'cf-access-jwt-assertion': strataToken }, real };
  };

  return { sigil, strata, secrets };
}

/** A store on the stack's S3, a yearly policy and a suspended target on a closed port: real names, no real work. */
async function seedStrata(stack: TestStack, token: string): Promise<void> {
  const { identity, recipient } = await generateAgeIdentity();
  const s3 = stack.infra.s3;
  const meta = (name: string) => ({ name, namespace: STRATA_NS });
  const target = (name: string) => ({
    apiVersion: 'backups.strata.dev/v1alpha1',
    kind: 'BackupTarget',
    metadata: meta(name),
    spec: { engine: 'postgres', endpoint: { host: '127.0.0.1', port: 9 }, databases: ['fuzz_absent'], credentials: { secretRef: { name: 'fuzz-credentials' } }, policy: 'fuzz-policy', scope: { mode: 'logical' }, suspend: true },
  });
  const secrets: Record<string, Record<string, string>> = {
    'fuzz-s3': { accessKeyId: s3.accessKey, secretAccessKey: s3.secretKey },
    'fuzz-age': { identity },
    'fuzz-credentials': { username: 'nobody', password: 'nothing' },
    'fuzz-doomed-secret': { username: 'nobody', password: 'nothing' },
  };
  for (const [name, data] of Object.entries(secrets)) {
    expectStatus(await call(stack.gatewayUrl, 'PUT', `/api/v1/secrets/${STRATA_NS}/${name}`, { headers: { 'cf-access-jwt-assertion': token }, body: { data } }), 200);
  }
  const documents = [
    {
      apiVersion: 'backups.strata.dev/v1alpha1',
      kind: 'BackupStore',
      metadata: meta('fuzz-store'),
      spec: { s3: { endpoint: s3.endpoint, region: s3.region, bucket: `${stack.namespace.replace(/_/g, '-')}fuzz`, pathStyle: true, credentialsSecret: { name: 'fuzz-s3' } }, encryption: { ageRecipients: [recipient], identitySecret: { name: 'fuzz-age' } } },
    },
    { apiVersion: 'backups.strata.dev/v1alpha1', kind: 'BackupPolicy', metadata: meta('fuzz-policy'), spec: { store: 'fuzz-store', full: { schedule: '0 3 1 1 *' }, pitr: { enabled: false } } },
    target('fuzz-target'),
    target('fuzz-doomed'),
  ];
  const applied = await call(stack.gatewayUrl, 'POST', '/api/v1/resources', { headers: { 'cf-access-jwt-assertion': token }, body: documents });
  expectStatus(applied, 200);
}

async function signerAccess(base: string, auth: Record<string, string>, envelopeId: string, recipientId: string): Promise<string> {
  // Its document renders first: a session opens on the recipient's turn.
  await until(() => call(base, 'GET', `/v1/envelopes/${envelopeId}`, { headers: auth }), (r) => r.status === 200 && r.body.status === 'sent');
  const session = expectStatus(await call(base, 'POST', `/v1/envelopes/${envelopeId}/sessions`, { headers: auth, body: { recipient: recipientId } }), 201);
  return expectStatus(await call(base, 'POST', '/v1/signing/exchange', { body: { token: session.token } }), 200).accessToken as string;
}

/** The viewer's access token, from the link e-mailed to it (the run's SMTP sink is shared by every stack: this stack's links only). */
async function viewerAccess(stack: TestStack, address: string, since: string): Promise<string> {
  const ours = new RegExp(`${stack.gatewayUrl.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/view#token=(sglv_[A-Za-z0-9]{40})`);
  const inbox = `${stack.infra.smtp.inboxUrl}/messages?to=${encodeURIComponent(address)}`;
  const read = async () => (await (await fetch(inbox)).json()) as Array<{ text: string; receivedAt: string }>;
  const tokens = await until(
    async () => (await read()).filter((m) => m.receivedAt >= since).map((m) => ours.exec(m.text)?.[1]).filter((t): t is string => Boolean(t)),
    (found) => found.length > 0,
    90_000,
  ).catch(async (error: unknown) => {
    throw new Error(`no viewer link for ${address} since ${since}; its mail: ${JSON.stringify((await read()).map((m) => [m.receivedAt, m.text.slice(0, 300)]))}`, { cause: error });
  });
  return expectStatus(await call(stack.gatewayUrl, 'POST', '/v1/viewer/exchange', { body: { token: tokens.at(-1) } }), 200).accessToken as string;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
function expectStatus(reply: { status: number; body: any }, status: number): any {
  if (reply.status !== status) throw new Error(`seeding the fuzz run: expected ${status}, got ${reply.status}: ${JSON.stringify(reply.body)}`);
  return reply.body;
}
