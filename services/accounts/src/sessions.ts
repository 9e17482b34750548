import { SIGIL } from '@sigil/proto/product';
import { AppError } from '@sigil/kit/errors';
import { enqueueEvent } from '@sigil/kit/bus';
import { newId } from '@sigil/kit/ids';
import { ROLE_PERMISSIONS, unauthorized, type Principal } from '@sigil/kit/auth';
import type { Db, Tx } from './db.ts';
import type { AuthenticateResponse } from '@sigil/proto/internal-auth';
import type { components } from '@sigil/proto/api/sigil';
import type { PasswordHasher } from './passwords.ts';
import { createOrganizationWithOwner } from './organizations.ts';
import type { Throttle } from './throttle.ts';
import { randomToken, sha256Hex } from './tokens.ts';
import { recordSsoAudit } from './sso/audit.ts';
import { checkPasswordSignIn } from './sso/enforcement.ts';
import { asRole, isUniqueViolation, normalizeEmail, requireEmail, toOrganizationView, toUserView, type SessionView } from './views.ts';

/** Dashboard sessions: 12 hours, the random token lives only in the cookie; the table keeps its SHA-256. */
export const SESSION_LIFETIME_SECONDS = 12 * 60 * 60;

const COOKIE_ATTRIBUTES = 'HttpOnly; Secure; SameSite=Lax; Path=/';

export function sessionCookie(token: string, maxAgeSeconds = SESSION_LIFETIME_SECONDS): string {
  return `${SIGIL.sessionCookie}=${token}; ${COOKIE_ATTRIBUTES}; Max-Age=${maxAgeSeconds}`;
}

export function clearedSessionCookie(): string {
  return `${SIGIL.sessionCookie}=; ${COOKIE_ATTRIBUTES}; Max-Age=0`;
}

export const INVALID_CREDENTIALS = 'Invalid e-mail or password.';

export interface IssuedSession {
  /** The cookie value; shown once, never stored. */
  token: string;
  session: SessionView;
}

/** Opens a session for a member of `organizationId` inside the caller's transaction. */
export async function issueSession(tx: Tx, userId: string, organizationId: string, now: Date): Promise<IssuedSession> {
  const membership = await tx.membership.findUnique({
    where: { organizationId_userId: { organizationId, userId } },
    include: { user: true, organization: true },
  });
  if (!membership) throw new Error(`User ${userId} is not a member of ${organizationId}`);
  const token = randomToken();
  const expiresAt = new Date(now.getTime() + SESSION_LIFETIME_SECONDS * 1000);
  await tx.session.create({ data: { id: newId('ses'), tokenHash: sha256Hex(token), userId, organizationId, expiresAt } });
  const role = asRole(membership.role);
  return {
    token,
    session: {
      object: 'session',
      user: toUserView(membership.user),
      organization: toOrganizationView(membership.organization),
      role,
      permissions: ROLE_PERMISSIONS[role].slice(),
      expiresAt: expiresAt.toISOString(),
    },
  };
}

/** Ends sessions inside the caller's transaction and tells the gateway to drop them from its cache. */
export async function revokeSessions(tx: Tx, where: { id?: string; userId?: string; organizationId: string }, now: Date): Promise<number> {
  const sessions = await tx.session.findMany({
    where: { ...where, revokedAt: null, expiresAt: { gt: now } },
    select: { id: true, tokenHash: true },
  });
  if (sessions.length === 0) return 0;
  await tx.session.updateMany({ where: { id: { in: sessions.map((s) => s.id) }, revokedAt: null }, data: { revokedAt: now } });
  for (const session of sessions) {
    await enqueueEvent(tx, { type: 'session.revoked', organizationId: where.organizationId, data: { sessionHash: session.tokenHash } });
  }
  return sessions.length;
}

export interface SessionServiceDeps {
  db: Db;
  throttle: Throttle;
  passwords: PasswordHasher;
  clock: () => Date;
}

export function createSessionService({ db, throttle, passwords, clock }: SessionServiceDeps) {
  return {
    /** A new organization, its first owner and a session for them (409 `conflict` if the e-mail has an account). */
    async signUp(input: components['schemas']['SignUp'], ip: string): Promise<IssuedSession> {
      const email = requireEmail(input.email);
      await throttle.enforce([[throttle.rules.signUpPerIp, ip]]);
      if (await db.user.findUnique({ where: { email }, select: { id: true } })) throw emailTaken();
      const passwordHash = await passwords.hash(input.password);
      try {
        return await db.$transaction(async (tx) => {
          const { organization, user } = await createOrganizationWithOwner(tx, {
            organizationName: input.organizationName,
            name: input.name,
            email,
            passwordHash,
          });
          return issueSession(tx, user.id, organization.id, clock());
        });
      } catch (error) {
        if (isUniqueViolation(error)) throw emailTaken();
        throw error;
      }
    },

    /**
     * E-mail and password. Every failure is the same 401 and costs the same argon2 work. Attempts are limited
     * per e-mail and address, and per address (429 with `Retry-After`); a success clears the e-mail's counter.
     * The organization is `organizationId` when the user belongs to it, otherwise the most recently joined one.
     * Where that organization enforces SSO for the e-mail's domain, only owners may use a password (sso/enforcement.ts).
     */
    async signIn(input: components['schemas']['SignIn'], ip: string): Promise<IssuedSession> {
      const email = normalizeEmail(input.email);
      const emailAndIp = `${email}\n${ip}`;
      await throttle.enforce([
        [throttle.rules.signInPerEmailIp, emailAndIp],
        [throttle.rules.signInPerIp, ip],
      ]);
      const user = await db.user.findUnique({ where: { email } });
      const valid = await passwords.verify(input.password, user?.passwordHash);
      if (!user || !valid) throw unauthorized(INVALID_CREDENTIALS);

      const memberships = await db.membership.findMany({
        where: { userId: user.id },
        orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
        select: { organizationId: true },
      });
      const chosen = memberships.find((m) => m.organizationId === input.organizationId) ?? memberships[0];
      if (!chosen) throw unauthorized(INVALID_CREDENTIALS);

      await throttle.reset(throttle.rules.signInPerEmailIp, emailAndIp);
      const breakGlass = await checkPasswordSignIn(db, { email, userId: user.id, organizationId: chosen.organizationId, ip, now: clock() });
      if (passwords.needsRehash(user.passwordHash)) {
        await db.user.update({ where: { id: user.id }, data: { passwordHash: await passwords.hash(input.password) } });
      }
      return db.$transaction(async (tx) => {
        const issued = await issueSession(tx, user.id, chosen.organizationId, clock());
        if (breakGlass) await recordSsoAudit(tx, breakGlass);
        return issued;
      });
    },

    /** Revokes the caller's session (`session.revoked` lets the gateway forget it at once). */
    async signOut(principal: Principal): Promise<void> {
      if (!principal.sessionId) throw unauthorized('This operation requires a dashboard session.');
      const sessionId = principal.sessionId;
      await db.$transaction((tx) => revokeSessions(tx, { id: sessionId, organizationId: principal.organizationId }, clock()));
    },

    async current(principal: Principal): Promise<SessionView> {
      const session = principal.sessionId
        ? await db.session.findUnique({ where: { id: principal.sessionId }, include: { user: true } })
        : null;
      if (!session || session.organizationId !== principal.organizationId || session.revokedAt || session.expiresAt <= clock()) {
        throw unauthorized('The dashboard session has ended; sign in again.');
      }
      const membership = await db.membership.findUnique({
        where: { organizationId_userId: { organizationId: session.organizationId, userId: session.userId } },
        include: { organization: true },
      });
      if (!membership) throw unauthorized('The dashboard session has ended; sign in again.');
      const role = asRole(membership.role);
      return {
        object: 'session',
        user: toUserView(session.user),
        organization: toOrganizationView(membership.organization),
        role,
        permissions: ROLE_PERMISSIONS[role].slice(),
        expiresAt: session.expiresAt.toISOString(),
      };
    },

    /** For the gateway: the principal of a session cookie, looked up by the token's SHA-256. */
    async authenticate(tokenHash: string): Promise<AuthenticateResponse> {
      const session = await db.session.findUnique({ where: { tokenHash } });
      if (!session) return { principal: null, reason: 'unknown' };
      if (session.revokedAt) return { principal: null, reason: 'revoked' };
      if (session.expiresAt <= clock()) return { principal: null, reason: 'expired' };
      const membership = await db.membership.findUnique({
        where: { organizationId_userId: { organizationId: session.organizationId, userId: session.userId } },
        select: { role: true },
      });
      if (!membership) return { principal: null, reason: 'revoked' };
      const role = asRole(membership.role);
      return {
        principal: {
          kind: 'session',
          organizationId: session.organizationId,
          actorId: session.userId,
          userId: session.userId,
          sessionId: session.id,
          role,
          permissions: ROLE_PERMISSIONS[role].slice(),
          mode: 'live',
        },
        expiresAt: session.expiresAt.toISOString(),
      };
    },
  };
}

export type SessionService = ReturnType<typeof createSessionService>;

function emailTaken(): AppError {
  return new AppError('conflict', 'An account with this e-mail address already exists; sign in instead.', {
    errors: [{ pointer: '/body/email', detail: 'is already registered' }],
  });
}
