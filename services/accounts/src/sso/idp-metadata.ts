import { X509Certificate } from 'node:crypto';
// node-saml's own XML helpers (xmldom + xpath, with its parse-error handling): the same parser that checks responses.
import { parseDomFromString, xpath } from '@node-saml/node-saml/lib/xml.js';
import { AppError } from '@sigil/kit/errors';

const REDIRECT_BINDING = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect';

export interface IdpMetadata {
  entityId: string;
  /** The SingleSignOnService of the HTTP-Redirect binding (our AuthnRequests go there). */
  ssoUrl: string;
  /** The signing certificates as PEM. */
  certificates: string[];
  /** When the earliest of them expires. */
  certificateExpiresAt: Date | null;
}

function invalid(detail: string, pointer: string): AppError {
  return new AppError('validation-failed', `The identity provider metadata ${detail}.`, { errors: [{ pointer, detail }] });
}

export function toPem(base64: string): string {
  const body = base64.replace(/\s+/g, '');
  return `-----BEGIN CERTIFICATE-----\n${body.match(/.{1,64}/g)?.join('\n') ?? ''}\n-----END CERTIFICATE-----\n`;
}

/** The earliest `notAfter` of some PEM certificates (an unreadable one is left out). */
export function earliestExpiry(certificates: string[]): Date | null {
  let earliest: Date | null = null;
  for (const pem of certificates) {
    try {
      const notAfter = new Date(new X509Certificate(pem).validTo);
      if (!earliest || notAfter < earliest) earliest = notAfter;
    } catch {
      // not a certificate: parseIdpMetadata has refused it already
    }
  }
  return earliest;
}

/** Reads an IdP's EntityDescriptor: its entity id, HTTP-Redirect SSO URL and signing certificates (400 otherwise). */
export async function parseIdpMetadata(xml: string, pointer = '/body/metadataXml'): Promise<IdpMetadata> {
  let doc: Awaited<ReturnType<typeof parseDomFromString>>;
  try {
    doc = await parseDomFromString(xml);
  } catch {
    throw invalid('is not well-formed XML', pointer);
  }
  const descriptor = xpath.selectElements(doc, "//*[local-name()='EntityDescriptor']")[0];
  const idp = descriptor && xpath.selectElements(descriptor, "./*[local-name()='IDPSSODescriptor']")[0];
  if (!descriptor || !idp) throw invalid('has no EntityDescriptor with an IDPSSODescriptor', pointer);
  const entityId = descriptor.getAttribute('entityID') ?? '';
  if (!entityId) throw invalid('has no entityID', pointer);

  const services = xpath.selectElements(idp, "./*[local-name()='SingleSignOnService']");
  const redirect = services.find((s) => s.getAttribute('Binding') === REDIRECT_BINDING);
  const ssoUrl = redirect?.getAttribute('Location') ?? '';
  if (!/^https?:\/\//.test(ssoUrl)) throw invalid('has no SingleSignOnService with the HTTP-Redirect binding', pointer);

  const keys = xpath.selectElements(idp, "./*[local-name()='KeyDescriptor']").filter((k) => (k.getAttribute('use') ?? 'signing') === 'signing');
  const certificates: string[] = [];
  for (const key of keys) {
    for (const cert of xpath.selectElements(key, ".//*[local-name()='X509Certificate']")) {
      const pem = toPem(cert.textContent ?? '');
      try {
        new X509Certificate(pem);
      } catch {
        throw invalid('has a signing certificate that cannot be read', pointer);
      }
      if (!certificates.includes(pem)) certificates.push(pem);
    }
  }
  if (certificates.length === 0) throw invalid('has no signing certificate (KeyDescriptor use="signing")', pointer);
  return { entityId, ssoUrl, certificates, certificateExpiresAt: earliestExpiry(certificates) };
}
