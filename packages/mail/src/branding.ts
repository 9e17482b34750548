import type { MessageKind, Part } from './messages.ts';

/** An organization's e-mail branding (accounts' OrganizationBranding, as the plan allows it today). */
export interface MailBranding {
  displayName: string | null;
  customMessage: string | null;
  footer: string | null;
  removePoweredBy: boolean;
  logoUrl: string | null;
}

/** The e-mails that ask the recipient to act or follow along carry the custom message; codes and outcomes do not. */
const WITH_MESSAGE: ReadonlySet<MessageKind> = new Set(['your_turn', 'reminder', 'viewer_link', 'invitation']);

export const POWERED_BY = 'Powered by Sigil.';

/** The organization as its e-mails name it: the branding's display name (one line), else its name. */
export function brandedName(organizationName: string, branding?: MailBranding | null): string {
  const display = branding?.displayName?.replace(/\s+/g, ' ').trim();
  return display || organizationName;
}

/** A web image URL, or nothing (an unusable logo URL leaves the e-mail without a logo rather than failing it). */
function imageUrl(url: string | null | undefined): string | undefined {
  if (!url) return undefined;
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'https:' || parsed.protocol === 'http:' ? parsed.toString() : undefined;
  } catch {
    return undefined;
  }
}

/** What the branding adds to a message: the logo on top, the quoted custom message, the footer and Powered-by below. */
export function brandingParts(kind: MessageKind, name: string, branding?: MailBranding | null): { top: Part[]; message: Part[]; bottom: Part[] } {
  const logo = imageUrl(branding?.logoUrl);
  const message = branding?.customMessage?.trim();
  const footer = branding?.footer?.trim();
  return {
    top: logo ? [{ image: logo, alt: name }] : [],
    message: message && WITH_MESSAGE.has(kind) ? [{ text: message, style: 'quote' }] : [],
    bottom: [...(footer ? [{ text: footer, style: 'small' as const }] : []), ...(branding?.removePoweredBy ? [] : [{ text: POWERED_BY, style: 'small' as const }])],
  };
}
