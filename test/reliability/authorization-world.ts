import { PDFDocument } from 'pdf-lib';
import { PERMISSIONS, type Permission, type Role } from '@sigil/kit/auth';
import { randomBase62 } from '@sigil/kit/ids';
import { bearer, call, createKey, publishOneRoleTemplate, until, type TestStack } from '../e2e/stack.ts';
import { UNREACHABLE_URL } from './authorization-values.ts';

/**
 * What the matrix's requests address: real resources of organization A in each mode (a "world"), organization B with
 * its own credentials, and every kind of credential the columns need. Everything is made through the public API, except
 * an API key's expiry in the past (accounts' database, as the end-to-end suite does).
 */

const PASSWORD = 'correct horse battery staple';
const ROLE = 'signer';

export interface Org {
  organizationId: string;
  name: string;
  email: string;
  cookie: string;
}

/** Resources of one organization in one mode, each a real id by its prefix. */
export interface World {
  mode: 'live' | 'test';
  ids: Record<string, string>;
  /** The ids of resources that belong to this mode (a caller of the other mode must never see them). */
  modeScopedIds: string[];
  /** A signer's access token for the world's envelope (exchanged from a signing session). */
  signerToken?: string;
  /** A viewer access token of the world's envelope, when asked for. */
  viewerToken?: string;
}

export function uniqueEmail(label: string): string {
  return `authz-${label}-${randomBase62(10).toLowerCase()}@example.com`;
}

export async function signUpOrg(base: string, label: string): Promise<Org> {
  const email = uniqueEmail(label);
  const name = `Authz ${label} ${randomBase62(6)}`;
  const res = await fetch(`${base}/v1/auth/sign-up`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ organizationName: name, name: `Owner ${label}`, email, password: PASSWORD }),
  });
  if (res.status !== 201) throw new Error(`sign-up answered ${res.status}: ${await res.text()}`);
  const body = (await res.json()) as { organization: { id: string } };
  return { organizationId: body.organization.id, name, email, cookie: sessionCookie(res) };
}

function sessionCookie(res: Response): string {
  const cookie = res.headers.getSetCookie().find((c) => c.startsWith('sigil_session='));
  if (!cookie) throw new Error(`no session cookie in an answer ${res.status}`);
  return cookie.split(';')[0] as string;
}

/** A new dashboard session of a user (each one independent: signing one out leaves the others). */
export async function signInAs(base: string, email: string): Promise<string> {
  const res = await fetch(`${base}/v1/auth/sign-in`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password: PASSWORD }) });
  if (res.status !== 200) throw new Error(`sign-in of ${email} answered ${res.status}: ${await res.text()}`);
  return sessionCookie(res);
}

export async function apiKey(base: string, cookie: string, mode: 'live' | 'test', scopes: readonly Permission[] = PERMISSIONS): Promise<{ id: string; secret: string }> {
  return createKey(base, cookie, { name: `authz ${mode} ${scopes.length}`, mode, scopes });
}

/** A key that no longer works: revoked, or expired (its expiry set in the past in accounts' database). */
export async function deadKey(stack: TestStack, cookie: string, how: 'revoked' | 'expired'): Promise<string> {
  const key = await apiKey(stack.gatewayUrl, cookie, 'live');
  if (how === 'revoked') {
    const revoked = await call(stack.gatewayUrl, 'DELETE', `/v1/api-keys/${key.id}`, { headers: { cookie } });
    if (revoked.status !== 204) throw new Error(`revoking a key answered ${revoked.status}`);
  } else {
    const updated = await stack.sql('accounts', `UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE id = $1`, [key.id]);
    if (updated.rowCount !== 1) throw new Error('the expired key was not found in accounts');
  }
  return key.secret;
}

/** A session that was signed out. */
export async function endedSession(base: string, email: string): Promise<string> {
  const cookie = await signInAs(base, email);
  const out = await call(base, 'POST', '/v1/auth/sign-out', { headers: { cookie } });
  if (out.status >= 300) throw new Error(`sign-out answered ${out.status}`);
  return cookie;
}

/** A member of the organization with this role, signed in (invited by the owner, then accepting). */
export async function memberWithRole(base: string, ownerCookie: string, role: Role): Promise<{ email: string; cookie: string; memberId: string }> {
  const email = uniqueEmail(role);
  const invited = await call(base, 'POST', '/v1/organization/invitations', { headers: { cookie: ownerCookie }, body: { email, role } });
  if (invited.status !== 201) throw new Error(`invitation answered ${invited.status}: ${JSON.stringify(invited.body)}`);
  const res = await fetch(`${base}/v1/auth/accept-invitation`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: invited.body.token, name: `A ${role}`, password: PASSWORD }) });
  if (res.status !== 201) throw new Error(`accepting the invitation answered ${res.status}: ${await res.text()}`);
  const cookie = sessionCookie(res);
  const members = await call(base, 'GET', '/v1/organization/members?limit=100', { headers: { cookie } });
  const memberId = (members.body.data as Array<{ id: string; user: { email: string } }>).find((m) => m.user.email === email)?.id;
  if (!memberId) throw new Error(`the new ${role} is not among the members`);
  return { email, cookie, memberId };
}

/** Ids that belong to the organization rather than to a mode: a key to revoke, a member, a pending invitation. */
export async function organizationIds(base: string, org: Org, memberId: string): Promise<Record<string, string>> {
  const victim = await apiKey(base, org.cookie, 'test', ['template:read']);
  const invitation = await call(base, 'POST', '/v1/organization/invitations', { headers: { cookie: org.cookie }, body: { email: uniqueEmail('pending'), role: 'member' } });
  if (invitation.status !== 201) throw new Error(`invitation answered ${invitation.status}`);
  const session = await call(base, 'GET', '/v1/auth/session', { headers: { cookie: org.cookie } });
  return { org: org.organizationId, usr: session.body.user.id, key: victim.id, mem: memberId, inv: invitation.body.id };
}

/** What a world can hold: the id prefixes it makes, and `signer` for a signer's access token. */
export const WORLD_PARTS = ['tpl', 'env', 'rcp', 'vwr', 'lnk', 'we', 'evt', 'signer'] as const;

export interface WorldOptions {
  /** Only what these parts need (default: everything). */
  needs?: ReadonlySet<string>;
  /** A template to use when `tpl` is not needed (a new one is published otherwise). */
  template?: string;
  /** Also the viewer's access token (its link comes by e-mail). */
  viewerToken?: boolean;
}

/**
 * A published template, an envelope (one embedded signer, one viewer), a signer's access token, a signing link, a
 * webhook endpoint and one webhook event, made with a key of the world's mode; or only the parts a request needs.
 */
export async function buildWorld(stack: TestStack, key: string, mode: 'live' | 'test', options: WorldOptions = {}): Promise<World> {
  const base = stack.gatewayUrl;
  const auth = bearer(key);
  const needs = (part: string) => !options.needs || options.needs.has(part);
  const needsEnvelope = needs('env') || needs('rcp') || needs('vwr') || needs('signer');
  const tpl = needs('tpl') || !options.template ? await publishOneRoleTemplate(base, auth, `Authz matrix ${mode}`, ROLE) : options.template;
  const ids: Record<string, string> = { tpl };
  const world: World = { mode, ids, modeScopedIds: [] };
  const viewerEmail = uniqueEmail('viewer');
  const since = new Date().toISOString();
  await Promise.all([
    needsEnvelope &&
      (async () => {
        const created = await call(base, 'POST', '/v1/envelopes', {
          headers: auth,
          body: { template: tpl, recipients: [{ role: ROLE, name: 'Ada Matrix', email: uniqueEmail('signer'), delivery: 'embedded' }], viewers: [{ email: viewerEmail, name: 'Vera Viewer' }] },
        });
        if (created.status !== 201) throw new Error(`envelope creation answered ${created.status}: ${JSON.stringify(created.body)}`);
        ids.env = created.body.id as string;
        ids.vwr = created.body.viewers[0].id as string;
        const sent = await until(() => call(base, 'GET', `/v1/envelopes/${ids.env}`, { headers: auth }), (r) => r.body?.status === 'sent');
        ids.rcp = sent.body.recipients[0].id as string;
        if (needs('signer')) world.signerToken = await signerToken(base, auth, ids.env, ids.rcp);
        if (options.viewerToken) world.viewerToken = await viewerToken(stack, viewerEmail, since);
      })(),
    needs('lnk') &&
      (async () => {
        const link = await call(base, 'POST', '/v1/signing-links', { headers: auth, body: { template: tpl, role: ROLE, title: 'Authz matrix' } });
        if (link.status !== 201) throw new Error(`signing link answered ${link.status}: ${JSON.stringify(link.body)}`);
        ids.lnk = link.body.id as string;
      })(),
    (needs('we') || needs('evt')) &&
      (async () => {
        const endpoint = await call(base, 'POST', '/v1/webhook-endpoints', { headers: auth, body: { url: UNREACHABLE_URL } });
        if (endpoint.status !== 201) throw new Error(`webhook endpoint answered ${endpoint.status}: ${JSON.stringify(endpoint.body)}`);
        ids.we = endpoint.body.id as string;
        if (!needs('evt')) return;
        const test = await call(base, 'POST', `/v1/webhook-endpoints/${ids.we}/test`, { headers: auth });
        if (test.status >= 300) throw new Error(`webhook test answered ${test.status}: ${JSON.stringify(test.body)}`);
        ids.evt = test.body.eventId as string;
      })(),
  ]);
  world.modeScopedIds = ['env', 'rcp', 'vwr', 'lnk', 'we', 'evt'].map((prefix) => ids[prefix]).filter((id): id is string => id !== undefined);
  return world;
}

/** A signing session of the recipient, exchanged for the access token (the session token itself is spent on first use). */
async function signerToken(base: string, auth: Record<string, string>, envelopeId: string, recipientId: string): Promise<string> {
  const session = await call(base, 'POST', `/v1/envelopes/${envelopeId}/sessions`, { headers: auth, body: { recipient: recipientId } });
  if (session.status !== 201) throw new Error(`signing session answered ${session.status}: ${JSON.stringify(session.body)}`);
  const exchanged = await call(base, 'POST', '/v1/signing/exchange', { body: { token: session.body.token } });
  if (exchanged.status !== 200) throw new Error(`signing exchange answered ${exchanged.status}: ${JSON.stringify(exchanged.body)}`);
  return exchanged.body.accessToken as string;
}

/** The viewer's link from the stack's inbox (shared by every stack of the run: this gateway's links only), exchanged. */
async function viewerToken(stack: TestStack, email: string, since: string): Promise<string> {
  const ours = new RegExp(`${stack.gatewayUrl.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/view#token=(sglv_[A-Za-z0-9]+)`);
  const token = await until(
    async () => {
      const messages = (await (await fetch(`${stack.infra.smtp.inboxUrl}/messages`)).json()) as Array<{ to: string[]; text: string; receivedAt: string }>;
      return messages.filter((m) => m.to.includes(email) && m.receivedAt >= since).map((m) => ours.exec(m.text)?.[1]).find(Boolean);
    },
    (found) => found !== undefined,
  );
  const exchanged = await call(stack.gatewayUrl, 'POST', '/v1/viewer/exchange', { body: { token } });
  if (exchanged.status !== 200) throw new Error(`viewer exchange answered ${exchanged.status}: ${JSON.stringify(exchanged.body)}`);
  return exchanged.body.accessToken as string;
}

let pdf: Uint8Array | undefined;

/** A one-page PDF (any other binary media type gets bytes its parser refuses, which is fine after authorization). */
export async function samplePdf(): Promise<Uint8Array> {
  if (!pdf) {
    const doc = await PDFDocument.create();
    doc.addPage([612, 792]);
    pdf = await doc.save();
  }
  return pdf;
}
