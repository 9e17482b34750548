import type { components } from '@sigil/proto/api/sigil';

export type SsoConnection = components['schemas']['SsoConnection'];
export type SsoConnectionTest = components['schemas']['SsoConnectionTest'];
export type SsoAuditEvent = components['schemas']['SsoAuditEvent'];
export type Protocol = 'saml' | 'oidc';

export const PROTOCOL_WORDS: Record<Protocol, string> = { saml: 'SAML 2.0', oidc: 'OpenID Connect' };

export function protocolOf(connection: SsoConnection): Protocol | undefined {
  return connection.protocol ?? connection.type;
}

/** The heading id of a connection's section (the table's names link to it). */
export function sectionId(providerId: string): string {
  return `connection-${providerId}`;
}

/** "example.com, example.org" as the API's list (lower case, no blanks, each once). */
export function parseDomains(text: string): string[] {
  return [...new Set(text.split(/[\s,;]+/).map((d) => d.trim().toLowerCase()).filter(Boolean))];
}

/** A certificate expiring within this many days is called out. */
const CERTIFICATE_WARNING_DAYS = 30;

export function certificateExpiresSoon(at: string | null | undefined, now = Date.now()): boolean {
  return !!at && new Date(at).getTime() - now < CERTIFICATE_WARNING_DAYS * 86_400_000;
}

/** What the service provider (Sigil) tells the identity provider, by protocol, in the words its settings use. */
export function serviceProviderDetails(connection: SsoConnection): { label: string; value: string }[] {
  if (protocolOf(connection) === 'oidc') return connection.redirectUri ? [{ label: 'Redirect URI', value: connection.redirectUri }] : [];
  return [
    { label: 'Entity ID (audience)', value: connection.entityId },
    { label: 'ACS URL (reply URL)', value: connection.acsUrl },
    { label: 'Metadata URL', value: connection.metadataUrl },
  ].filter((d): d is { label: string; value: string } => !!d.value);
}

/** A test's attributes (SAML) or claims (OIDC) as name and value, lists joined. */
export function attributeRows(attributes: Record<string, unknown> | undefined): { name: string; value: string }[] {
  return Object.entries(attributes ?? {}).map(([name, value]) => ({
    name,
    value: Array.isArray(value) ? value.map(String).join(', ') : typeof value === 'object' && value !== null ? JSON.stringify(value) : String(value),
  }));
}
