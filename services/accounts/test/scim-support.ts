/** Shared by the scim-*.test.ts files: an organization on a plan with SCIM, its token, and SCIM requests. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { expect } from 'vitest';
import type { Harness, SignedUp } from './helpers.ts';
import { signUp } from './helpers.ts';

export const SCIM_JSON = 'application/scim+json';

export interface ScimOrg {
  owner: SignedUp;
  token: string;
}

/** A new organization on Business (which has SCIM) with a SCIM token. */
export async function scimOrganization(h: Harness): Promise<ScimOrg> {
  const owner = await signUp(h);
  h.plans.set(owner.organizationId, 'business');
  const res = await request(h.app).post('/v1/scim/token').set(owner.headers);
  if (res.status !== 201) throw new Error(`createScimToken: ${res.status} ${JSON.stringify(res.body)}`);
  return { owner, token: res.body.token as string };
}

/** A SCIM request as an identity provider sends it (bearer token, SCIM media type). */
export function scim(h: Harness, token: string, method: 'get' | 'post' | 'put' | 'patch' | 'delete', url: string, body?: unknown) {
  const req = request(h.app)[method](`/scim/v2${url}`).set('authorization', `Bearer ${token}`).set('accept', SCIM_JSON);
  return body === undefined ? req : req.set('content-type', `${SCIM_JSON}; charset=utf-8`).send(JSON.stringify(body));
}

/** A SCIM answer's JSON (supertest leaves `application/scim+json` bodies as text). */
export function scimBody(res: request.Response): Record<string, unknown> {
  return res.text ? (JSON.parse(res.text) as Record<string, unknown>) : {};
}

export interface FixtureStep {
  name: string;
  request: { method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'; path: string; body?: unknown };
  response: { status: number; body?: Record<string, unknown> };
  /** Values of the answer to use in later steps as `{{name}}`: name → top-level attribute of the answer. */
  capture?: Record<string, string>;
  /** What Sigil must show after the step: the role of the member with this e-mail, or null for no membership. */
  member?: { email: string; role: string | null };
}

export interface Fixture {
  idp: string;
  source: string;
  steps: FixtureStep[];
}

export function loadFixture(name: string): Fixture {
  return JSON.parse(readFileSync(path.join(import.meta.dirname, 'fixtures/scim', name), 'utf8')) as Fixture;
}

function substitute<T>(value: T, vars: Record<string, string>): T {
  const text = JSON.stringify(value).replace(/\{\{(\w+)\}\}/g, (_, name: string) => {
    if (!(name in vars)) throw new Error(`fixture uses {{${name}}} before it was captured`);
    return vars[name] as string;
  });
  return JSON.parse(text) as T;
}

/** Replays a recorded sequence in order, checking every answer (status, media type, body) and Sigil's membership. */
export async function replay(h: Harness, org: ScimOrg, fixture: Fixture): Promise<Record<string, string>> {
  const vars: Record<string, string> = {};
  for (const raw of fixture.steps) {
    const step = substitute(raw, vars);
    const res = await scim(h, org.token, step.request.method.toLowerCase() as 'get', step.request.path, step.request.body);
    const body = scimBody(res);
    expect({ step: step.name, status: res.status, body }).toMatchObject({ step: step.name, status: step.response.status });
    if (res.status !== 204) expect(res.headers['content-type'], step.name).toMatch(/^application\/scim\+json/);
    if (step.response.body) expect(body, step.name).toMatchObject(step.response.body);
    for (const [name, attribute] of Object.entries(step.capture ?? {})) vars[name] = String(body[attribute]);
    if (step.member) {
      const membership = await h.db.membership.findFirst({ where: { organizationId: org.owner.organizationId, user: { email: step.member.email.toLowerCase() } } });
      expect(membership?.role ?? null, `${step.name}: role of ${step.member.email}`).toBe(step.member.role);
    }
  }
  return vars;
}
