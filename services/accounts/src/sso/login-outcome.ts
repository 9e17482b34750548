import type { Reply } from '@sigil/kit/api';
import type { Logger } from '@sigil/kit/log';
import type { Db, Tx } from '../db.ts';
import type { User } from '../generated/prisma/client.ts';
import { lockOrganization } from '../organizations.ts';
import { mayLinkAccount, provisionMember } from '../provisioning.ts';
import { issueSession, sessionCookie } from '../sessions.ts';
import { asRole, isUniqueViolation } from '../views.ts';
import { recordSsoAudit } from './audit.ts';
import { canonicalEmail, emailDomain } from './domains.ts';
import { SsoFailure } from './failure.ts';
import type { LoginState } from './login-state.ts';
import { redirect, testResultPage } from './pages.ts';
import { landingUrl } from './return-path.ts';
import { signInErrorUrl } from './urls.ts';
import type { SsoConnectionRow } from './connections.ts';

export interface VerifiedIdentity {
  email: string;
  attributes: Record<string, unknown>;
}

export type LoginResult = { ok: true; identity: VerifiedIdentity } | { ok: false; failure: SsoFailure; email?: string; attributes?: Record<string, unknown> };

export interface OutcomeDeps {
  db: Db;
  publicUrl: string;
  clock: () => Date;
  log: Logger;
}

type Connection = SsoConnectionRow & { domains: { domain: string }[] };

const text = (value: unknown) => (typeof value === 'string' ? value.trim() : Array.isArray(value) && typeof value[0] === 'string' ? value[0].trim() : '');

/** A display name from what the IdP sent: first and last name, `name`, or the e-mail's local part. */
export function displayName(identity: VerifiedIdentity): string {
  const a = identity.attributes;
  const full = [text(a.firstName) || text(a.given_name), text(a.lastName) || text(a.family_name)].filter(Boolean).join(' ');
  return (full || text(a.name) || text(a.displayName) || identity.email.split('@')[0] || identity.email).slice(0, 200);
}

/** Health: a success clears nothing but is newer than the last error; a protocol failure is the connection's last error. */
async function recordHealth(tx: Tx, connection: Connection, failure: SsoFailure | undefined, now: Date): Promise<void> {
  if (!failure) await tx.ssoConnection.update({ where: { id: connection.id }, data: { lastSuccessAt: now } });
  else if (failure.countsAgainstHealth) await tx.ssoConnection.update({ where: { id: connection.id }, data: { lastError: failure.message, lastErrorAt: now } });
}

/** What happens once the IdP's answer is checked: a test's outcome, a session, or a refusal — each audited. */
export function createLoginOutcomes(deps: OutcomeDeps) {
  const { db, publicUrl, clock } = deps;

  /** The asserted address, in the form accounts are kept (ASCII domain), must be in one of the connection's domains. */
  function domainCheck(connection: Connection, result: LoginResult): LoginResult {
    if (!result.ok) return result;
    const email = canonicalEmail(result.identity.email);
    if (!email) return { ok: false, attributes: result.identity.attributes, failure: new SsoFailure('no_email', `The identity provider's address "${result.identity.email.slice(0, 254)}" is not a valid e-mail address.`) };
    const domain = emailDomain(email);
    if (domain && connection.domains.some((d) => d.domain === domain)) return { ok: true, identity: { ...result.identity, email } };
    return {
      ok: false,
      email: result.identity.email,
      attributes: result.identity.attributes,
      failure: new SsoFailure('domain_not_allowed', `${result.identity.email} is not in a domain of this connection (${connection.domains.map((d) => d.domain).join(', ')}).`),
    };
  }

  async function finishTest(connection: Connection, login: LoginState, result: LoginResult, ip: string): Promise<Reply> {
    const now = clock();
    const failure = result.ok ? undefined : result.failure;
    const email = result.ok ? result.identity.email : result.email;
    const attributes = (result.ok ? result.identity.attributes : result.attributes) ?? {};
    await db.$transaction(async (tx) => {
      const updated = await tx.ssoTest.updateMany({
        where: { id: login.testId ?? '', connectionId: connection.id, status: 'pending' },
        data: { status: failure ? 'failed' : 'succeeded', reason: failure?.message ?? null, reasonCode: failure?.code ?? null, attributes: attributes as object, completedAt: now },
      });
      // A test's state used twice (a replayed response) leaves the recorded outcome as it was.
      if (updated.count === 1) await recordHealth(tx, connection, failure, now);
      await recordSsoAudit(tx, {
        organizationId: connection.organizationId,
        action: failure ? 'connection.test_failed' : 'connection.test_succeeded',
        actor: { type: 'sso' },
        subject: email ?? null,
        providerId: connection.providerId,
        outcome: failure ? 'failure' : 'success',
        reason: failure?.message ?? null,
        details: { testId: login.testId, ...(failure ? { reasonCode: failure.code } : {}), attributeNames: Object.keys(attributes) },
        ip,
        at: now,
      });
    });
    return testResultPage(!failure, failure?.message);
  }

  async function refuseSignIn(connection: Connection, failure: SsoFailure, email: string | undefined, ip: string): Promise<Reply> {
    const now = clock();
    await db.$transaction(async (tx) => {
      await recordHealth(tx, connection, failure, now);
      await recordSsoAudit(tx, {
        organizationId: connection.organizationId,
        action: 'sso.sign_in_failed',
        actor: { type: 'sso' },
        subject: email ?? null,
        providerId: connection.providerId,
        outcome: 'failure',
        reason: failure.message,
        details: { reasonCode: failure.code },
        ip,
        at: now,
      });
    });
    deps.log.info({ providerId: connection.providerId, organizationId: connection.organizationId, reason: failure.code }, 'sso sign-in refused');
    return redirect(303, signInErrorUrl(publicUrl, failure.message));
  }

  /** Just-in-time provisioning: the account (a new password-less one, or an orphaned one an IdP made) and its membership with the default role. */
  async function provision(tx: Tx, connection: Connection, identity: VerifiedIdentity, ip: string, now: Date): Promise<User> {
    const organizationId = connection.organizationId;
    // Settings refuse `owner` as the default role; a row that says so anyway (a manual edit) gives `member`.
    const configured = asRole(connection.defaultRole);
    const role = configured === 'owner' ? 'member' : configured;
    const { user, membership } = await provisionMember(tx, { organizationId, email: identity.email, name: displayName(identity), role });
    await recordSsoAudit(tx, {
      organizationId,
      action: 'sso.member_provisioned',
      actor: { type: 'sso' },
      subject: user.email,
      providerId: connection.providerId,
      details: { userId: user.id, memberId: membership.id, role },
      ip,
      at: now,
    });
    return user;
  }

  /**
   * A session for the member (provisioned first when allowed), or why not: the person is no member and JIT is off, or
   * the address already has a Sigil account. JIT creates accounts, it never adds an existing one to the organization:
   * domains are not verified, so an organization claiming someone else's domain with its own IdP could otherwise pull
   * that person's account into it and get a session as them. An existing account joins by invitation; only an
   * account an IdP made (no password, so it could not accept one) that belongs to no organization any more is taken
   * back, which gives nobody more than creating it would.
   */
  async function openSession(connection: Connection, identity: VerifiedIdentity, ip: string) {
    const organizationId = connection.organizationId;
    return db.$transaction(async (tx) => {
      await lockOrganization(tx, organizationId);
      const now = clock();
      const existing = await tx.user.findUnique({ where: { email: identity.email } });
      const member = existing && (await tx.membership.findUnique({ where: { organizationId_userId: { organizationId, userId: existing.id } } }));
      // The organization's own SCIM deactivated them: JIT must not bring them back behind the IdP admin's back.
      if (existing && !member && (await tx.scimUser.findFirst({ where: { organizationId, userId: existing.id, active: false }, select: { id: true } }))) return 'deprovisioned' as const;
      if (!member && !connection.jitProvisioning) return 'not_a_member' as const;
      if (existing && !member && !(await mayLinkAccount(tx, existing, organizationId))) return 'has_account' as const;
      const user = existing && member ? existing : await provision(tx, connection, identity, ip, now);
      const session = await issueSession(tx, user.id, organizationId, now);
      await recordHealth(tx, connection, undefined, now);
      await recordSsoAudit(tx, {
        organizationId,
        action: 'sso.sign_in',
        actor: { type: 'sso', id: user.id },
        subject: identity.email,
        providerId: connection.providerId,
        details: { protocol: connection.protocol, provisioned: !member },
        ip,
        at: now,
      });
      return session;
    });
  }

  async function signIn(connection: Connection, login: LoginState, identity: VerifiedIdentity, ip: string): Promise<Reply> {
    let issued;
    try {
      issued = await openSession(connection, identity, ip);
    } catch (error) {
      // The same address was registered (sign-up, invitation) between our look-up and insert.
      if (!isUniqueViolation(error)) throw error;
      return refuseSignIn(connection, new SsoFailure('provisioning_failed', `An account for ${identity.email} was created at the same moment; sign in again.`), identity.email, ip);
    }
    if (typeof issued === 'string') {
      const organization = await db.organization.findUnique({ where: { id: connection.organizationId }, select: { name: true } });
      const name = organization?.name ?? 'this organization';
      const failure =
        issued === 'has_account'
          ? new SsoFailure('not_a_member', `${identity.email} already has a Sigil account and is not a member of ${name}; ask an admin to invite you.`)
          : issued === 'deprovisioned'
            ? new SsoFailure('deprovisioned', `${identity.email} was deactivated by ${name}'s identity provider (SCIM); ask an admin to reactivate you there.`)
            : new SsoFailure('not_a_member', `${identity.email} is not a member of ${name}; ask an admin to invite you.`);
      return refuseSignIn(connection, failure, identity.email, ip);
    }
    return redirect(303, landingUrl(publicUrl, login.returnTo), { 'set-cookie': sessionCookie(issued.token) });
  }

  return {
    /** Ends a login whose state was found: a test page, a session and a 303 into the dashboard, or a refusal. */
    async finish(connection: Connection, login: LoginState, raw: LoginResult, ip: string): Promise<Reply> {
      const result = domainCheck(connection, raw);
      if (login.purpose === 'test') return finishTest(connection, login, result, ip);
      if (!result.ok) return refuseSignIn(connection, result.failure, result.email, ip);
      return signIn(connection, login, result.identity, ip);
    },

    /** A sign-in that could not even start (the OpenID provider's discovery failed): audited like any refusal. */
    startFailed(connection: Connection, email: string, ip: string): Promise<Reply> {
      return refuseSignIn(connection, new SsoFailure('connection_unavailable', 'Your identity provider cannot be reached right now; try again later.'), email, ip);
    },

    /** A callback whose state names no login (forged, or too old to be kept): nothing to audit it against. */
    unknownLogin(): Reply {
      return redirect(303, signInErrorUrl(publicUrl, 'This sign-in link is unknown or has expired; start again from the sign-in page.'));
    },
  };
}

export type LoginOutcomes = ReturnType<typeof createLoginOutcomes>;
