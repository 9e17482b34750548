import { AppError } from '@sigil/kit/errors';
import type { Db } from '../db.ts';
import type { SsoAuditEntry } from './audit.ts';
import { emailDomain } from './domains.ts';

/**
 * Enforced SSO for password sign-in: a member whose e-mail domain belongs to an enforced connection of the
 * organization signs in through the IdP. Owners keep a break-glass password sign-in (the IdP may be down or
 * misconfigured), audited as `sso.break_glass_sign_in`. Called after the password was checked, so the refusal says
 * nothing to someone who does not know it. Answers the break-glass audit entry to record with the session.
 */
export async function checkPasswordSignIn(db: Db, input: { email: string; userId: string; organizationId: string; ip: string; now: Date }): Promise<SsoAuditEntry | null> {
  const domain = emailDomain(input.email);
  if (!domain) return null;
  const owned = await db.ssoDomain.findUnique({ where: { domain }, include: { connection: true } });
  const connection = owned?.connection;
  if (!connection || !connection.enforced || connection.organizationId !== input.organizationId) return null;
  const membership = await db.membership.findUnique({ where: { organizationId_userId: { organizationId: input.organizationId, userId: input.userId } }, select: { role: true } });
  if (membership?.role === 'owner') {
    return {
      organizationId: input.organizationId,
      action: 'sso.break_glass_sign_in',
      actor: { type: 'member', id: input.userId },
      subject: input.email,
      providerId: connection.providerId,
      reason: 'An owner signed in with a password although single sign-on is enforced.',
      ip: input.ip,
      at: input.now,
    };
  }
  throw new AppError('forbidden', 'This organization signs in with single sign-on. Use "Continue with SSO" on the sign-in page.', {
    extensions: { sso: true, providerId: connection.providerId },
  });
}
