import { PERMISSIONS, type Permission, type Role } from '@sigil/kit/auth';
import { upgradeToTeam } from '../e2e/checkout.ts';
import { bearer, call, type TestStack } from '../e2e/stack.ts';
import { STRATA_ROLES, type StrataRole } from '@sigil/proto/strata';
import { roleLacking, type SigilKind, type SigilOperation, type StrataKind } from './authorization-contract.ts';
import type { ValueSource } from './authorization-values.ts';
import { apiKey, buildWorld, deadKey, endedSession, memberWithRole, organizationIds, samplePdf, signInAs, signUpOrg, type Org, type World } from './authorization-world.ts';

/**
 * The credentials of every column, and the world each cell's request addresses. Organization A owns what the requests
 * address (a world per mode); organization B is the foreign caller.
 */
export interface SigilSetup {
  /**
   * The credential a column sends to an operation. With `own`, the cell has things of its own: a new session where the
   * column sends one, and the signer's token of its own world.
   */
  credential(op: SigilOperation, kind: SigilKind, own?: { world?: World }): Promise<Record<string, string>>;
  /** The world a column's request addresses: A's test world for the live key, A's live world otherwise. */
  world(kind: SigilKind): World;
  /** A new world of the mode the column addresses, with only these parts, for a cell that may change what it addresses. */
  freshWorld(kind: SigilKind, needs: ReadonlySet<string>): Promise<World>;
  source(world: World): ValueSource;
  /** What the answer to this column must not contain. */
  secrets(kind: SigilKind): string[];
}

/** A placeholder of the key's shape but not its length: refused before any look-up. */
const MALFORMED_KEY = 'sgl_live_short';

function memo<K, V>(make: (key: K) => Promise<V>): (key: K) => Promise<V> {
  const known = new Map<K, Promise<V>>();
  return (key) => {
    let value = known.get(key);
    if (!value) known.set(key, (value = make(key)));
    return value;
  };
}

export async function setUpSigil(stack: TestStack): Promise<SigilSetup> {
  const base = stack.gatewayUrl;
  const [a, b]: Org[] = await Promise.all([signUpOrg(base, 'a'), signUpOrg(base, 'b')]);
  if (!a || !b) throw new Error('sign-up failed');
  // Both on Team: A can make every kind of resource (signing links are not on Free), and B's plan never answers for it
  // (a plan refusal could come before the look-up whose 404 the foreign cells expect).
  const upgraded = Promise.all([upgradeToTeam(base, a.cookie), upgradeToTeam(base, b.cookie)]);
  const member = memo((role: Role) => memberWithRole(base, a.cookie, role));
  const keyLacking = memo(async (permission: Permission) => (await apiKey(base, a.cookie, 'live', PERMISSIONS.filter((p) => p !== permission))).secret);
  const [aLive, aTest, bLive, revoked, expired, ended, viewerMember] = await Promise.all([
    apiKey(base, a.cookie, 'live'),
    apiKey(base, a.cookie, 'test'),
    apiKey(base, b.cookie, 'live'),
    deadKey(stack, a.cookie, 'revoked'),
    deadKey(stack, a.cookie, 'expired'),
    endedSession(base, a.email),
    member(roleLacking(undefined)),
  ]);
  await upgraded;
  const [live, test, orgIds] = await Promise.all([
    buildWorld(stack, aLive.secret, 'live', { viewerToken: true }),
    buildWorld(stack, aTest.secret, 'test'),
    organizationIds(base, a, viewerMember.memberId),
  ]);
  const pdf = await samplePdf();
  const ofA = [a.organizationId, a.name, a.email, viewerMember.email, ...Object.values(live.ids), ...Object.values(test.ids), ...Object.values(orgIds)];

  return {
    world: (kind) => (kind === 'live key, test resource' ? test : live),
    freshWorld: (kind, needs) =>
      kind === 'live key, test resource'
        ? buildWorld(stack, aTest.secret, 'test', { needs, template: test.ids.tpl })
        : buildWorld(stack, aLive.secret, 'live', { needs, template: live.ids.tpl }),
    source: (world) => ({
      idFor: (prefix) => world.ids[prefix] ?? orgIds[prefix],
      bytesFor: (mediaType) => (mediaType === 'application/pdf' ? pdf : new TextEncoder().encode('authz matrix')),
    }),
    secrets: (kind) => (kind === 'other org' ? ofA : kind === 'test key, live resource' ? live.modeScopedIds : kind === 'live key, test resource' ? test.modeScopedIds : []),
    async credential(op, kind, own): Promise<Record<string, string>> {
      switch (kind) {
        case 'none':
          return {};
        case 'malformed key':
          return bearer(MALFORMED_KEY);
        case 'revoked key':
          return bearer(revoked);
        case 'expired key':
          return bearer(expired);
        case 'ended session':
          return { cookie: ended };
        case 'other org':
          if (op.auth !== 'D') return bearer(bLive.secret);
          return { cookie: own ? await signInAs(base, b.email) : b.cookie };
        case 'test key, live resource':
          return bearer(aTest.secret);
        case 'live key, test resource':
        case 'API key':
          return bearer(aLive.secret);
        case 'missing permission': {
          if (op.auth === 'K' && op.permission) return bearer(await keyLacking(op.permission));
          const holder = await member(roleLacking(op.permission));
          return { cookie: own ? await signInAs(base, holder.email) : holder.cookie };
        }
        case 'signer token':
          return bearer((own?.world ?? live).signerToken as string);
        case 'viewer token':
          return bearer(live.viewerToken as string);
      }
    },
  };
}

export interface StrataSetup {
  credential(kind: StrataKind): Record<string, string>;
}

const ACCESS_HEADER = 'cf-access-jwt-assertion';

/** A dev-issuer token per role (the gateway's `/api/dev/token`), and a token no issuer signed. */
export async function setUpStrata(stack: TestStack): Promise<StrataSetup> {
  const tokens = new Map<StrataRole, string>();
  await Promise.all(
    STRATA_ROLES.map(async (role) => {
      const minted = await call(stack.gatewayUrl, 'POST', '/api/dev/token', { body: { email: `authz-${role}@example.test`, role } });
      if (minted.status !== 200) throw new Error(`dev token for ${role} answered ${minted.status}: ${JSON.stringify(minted.body)}`);
      tokens.set(role, minted.body.token as string);
    }),
  );
  return {
    credential(kind): Record<string, string> {
      if (kind === 'none') return {};
      if (kind === 'invalid token') return { [ACCESS_HEADER]: 'eyJhbGciOiJub25lIn0.eyJzdWIiOiJhdXRoei1tYXRyaXgifQ.' };
      return { [ACCESS_HEADER]: tokens.get(kind) as string };
    },
  };
}
