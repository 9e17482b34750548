import { domainToASCII } from 'node:url';
import { AppError } from '@sigil/kit/errors';

/** A DNS name of at least two labels, each 1–63 letters, digits or inner hyphens, the last not numeric. */
const DOMAIN = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+(?:[a-z]{2,63}|xn--[a-z0-9-]{1,59})$/;

/**
 * The domains of a connection as stored: trimmed, lower-cased, a leading `@` dropped, IDNs in their ASCII form,
 * no duplicates. A name that is not a domain is a 400 beside its item of `domains`.
 */
export function normalizeDomains(input: string[]): string[] {
  const out: string[] = [];
  input.forEach((raw, index) => {
    const ascii = domainToASCII(raw.trim().replace(/^@/, '').replace(/\.$/, '').toLowerCase());
    if (!DOMAIN.test(ascii)) {
      throw new AppError('validation-failed', `"${raw}" is not a domain name (e.g. example.com).`, {
        errors: [{ pointer: `/body/domains/${index}`, detail: 'is not a domain name' }],
      });
    }
    if (!out.includes(ascii)) out.push(ascii);
  });
  if (out.length === 0) {
    throw new AppError('validation-failed', 'A connection needs at least one e-mail domain.', { errors: [{ pointer: '/body/domains', detail: 'needs at least one domain' }] });
  }
  return out;
}

/** The domain part of an e-mail address (lower case, ASCII), or undefined when it has none. */
export function emailDomain(email: string): string | undefined {
  const at = email.lastIndexOf('@');
  if (at < 1) return undefined;
  const domain = domainToASCII(email.slice(at + 1).trim().toLowerCase());
  return domain || undefined;
}

const EMAIL_LOCAL = /^[^\s@]{1,64}$/;

/**
 * An address an identity provider asserted, as accounts keep them: lower case, the domain in its ASCII form (so a
 * full-width or Unicode spelling names the domain it maps to, never another account), no trailing dot; undefined
 * when it is not an address (spaces, no domain, more than one `@`).
 */
export function canonicalEmail(raw: string): string | undefined {
  const email = raw.trim().toLowerCase();
  const at = email.indexOf('@');
  if (at < 1 || at !== email.lastIndexOf('@')) return undefined;
  const local = email.slice(0, at);
  const domain = domainToASCII(email.slice(at + 1));
  if (!EMAIL_LOCAL.test(local) || !DOMAIN.test(domain)) return undefined;
  const canonical = `${local}@${domain}`;
  return canonical.length <= 254 ? canonical : undefined;
}
