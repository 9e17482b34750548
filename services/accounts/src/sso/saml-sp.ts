import { randomBytes } from 'node:crypto';
import { SAML, ValidateInResponseTo, generateServiceProviderMetadata, type CacheProvider } from '@node-saml/node-saml';
import { parseDomFromString, xpath } from '@node-saml/node-saml/lib/xml.js';
import { samlFailure, SsoFailure } from './failure.ts';
import { LOGIN_STATE_SECONDS } from './login-state.ts';

/** Clocks of the IdP and ours may differ by this much (NotBefore, NotOnOrAfter). */
export const SAML_CLOCK_SKEW_MS = 60_000;
const EMAIL_FORMAT = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress';

export interface SamlServiceProvider {
  entityId: string;
  acsUrl: string;
}

export interface SamlIdp {
  entityId: string;
  ssoUrl: string;
  certificates: string[];
}

/**
 * node-saml configured as we require: assertions must be signed by the IdP's certificate (the response may be signed
 * too), the audience is our entity id, timestamps are checked with a small skew, and InResponseTo must name a request
 * we sent (`cache`, shared by every replica).
 */
function samlClient(sp: SamlServiceProvider, idp: SamlIdp, cache: CacheProvider, requestId?: string): SAML {
  return new SAML({
    issuer: sp.entityId,
    callbackUrl: sp.acsUrl,
    audience: sp.entityId,
    entryPoint: idp.ssoUrl,
    idpIssuer: idp.entityId,
    idpCert: idp.certificates,
    identifierFormat: EMAIL_FORMAT,
    wantAssertionsSigned: true,
    wantAuthnResponseSigned: false,
    acceptedClockSkewMs: SAML_CLOCK_SKEW_MS,
    validateInResponseTo: ValidateInResponseTo.always,
    requestIdExpirationPeriodMs: LOGIN_STATE_SECONDS * 1000,
    cacheProvider: cache,
    disableRequestedAuthnContext: true,
    ...(requestId ? { generateUniqueId: () => requestId } : {}),
  });
}

export const newSamlRequestId = () => `_${randomBytes(20).toString('hex')}`;

/** The IdP URL (HTTP-Redirect binding) of an AuthnRequest with id `requestId`, carrying `relayState`. */
export async function samlAuthorizeUrl(sp: SamlServiceProvider, idp: SamlIdp, cache: CacheProvider, requestId: string, relayState: string): Promise<string> {
  return samlClient(sp, idp, cache, requestId).getAuthorizeUrlAsync(relayState, undefined, {});
}

export function samlServiceProviderMetadata(sp: SamlServiceProvider): string {
  return generateServiceProviderMetadata({ issuer: sp.entityId, callbackUrl: sp.acsUrl, identifierFormat: EMAIL_FORMAT, wantAssertionsSigned: true });
}

export interface SamlLogin {
  email: string;
  attributes: Record<string, unknown>;
  assertionId: string;
  issuer: string;
  /** Until when the assertion could be presented (its id is remembered that long). */
  expiresAt: Date;
}

type XmlNode = { $?: Record<string, string>; _?: string; [child: string]: unknown };
const first = (node: unknown, name: string): XmlNode | undefined => ((node as Record<string, XmlNode[] | undefined>)?.[name] ?? [])[0];
const all = (node: unknown, name: string): XmlNode[] => (node as Record<string, XmlNode[] | undefined>)?.[name] ?? [];

/**
 * Checks a POSTed SAMLResponse answering request `requestId`: signature (assertion), audience, timestamps and
 * InResponseTo by node-saml; then ours: the response's Destination and the subject confirmation's Recipient are our
 * ACS, the Issuer is the IdP's entity id, and the response answers this login's request. Every refusal is an
 * SsoFailure with its reason.
 */
export async function validateSamlResponse(sp: SamlServiceProvider, idp: SamlIdp, cache: CacheProvider, samlResponse: string, requestId: string | null): Promise<SamlLogin> {
  const xml = Buffer.from(samlResponse, 'base64').toString('utf8');
  let doc: Awaited<ReturnType<typeof parseDomFromString>>;
  try {
    doc = await parseDomFromString(xml);
  } catch {
    throw new SsoFailure('invalid_response', 'The SAML response is not well-formed XML.');
  }
  const root = doc.documentElement;
  if (!root || root.localName !== 'Response') throw new SsoFailure('invalid_response', 'The posted message is not a SAML Response.');
  const assertionSigned = xpath.selectElements(doc, "/*[local-name()='Response']/*[local-name()='Assertion']/*[local-name()='Signature']").length > 0;
  const inResponseTo = root.getAttribute('InResponseTo');
  if (requestId && inResponseTo && inResponseTo !== requestId) {
    throw new SsoFailure('wrong_in_response_to', 'The response answers another sign-in request (InResponseTo does not match).');
  }
  const destination = root.getAttribute('Destination');
  if (destination && destination !== sp.acsUrl) throw new SsoFailure('wrong_destination', `The response is addressed to ${destination}, not to our ACS ${sp.acsUrl}.`);

  let profile;
  try {
    ({ profile } = await samlClient(sp, idp, cache).validatePostResponseAsync({ SAMLResponse: samlResponse }));
  } catch (error) {
    throw samlFailure(error, assertionSigned);
  }
  if (!profile) throw new SsoFailure('invalid_response', 'The SAML response carries no assertion.');
  const assertion = (profile.getAssertion?.() as { Assertion?: XmlNode } | undefined)?.Assertion;
  if (!assertion) throw new SsoFailure('invalid_response', 'The SAML response carries no assertion.');
  if (profile.issuer !== idp.entityId) throw new SsoFailure('wrong_issuer', `The assertion was issued by ${profile.issuer ?? 'nobody'}, not by ${idp.entityId}.`);

  const confirmations = all(first(assertion, 'Subject'), 'SubjectConfirmation').map((c) => first(c, 'SubjectConfirmationData')?.$ ?? {});
  // The Response's InResponseTo is outside the assertion's signature (the response need not be signed): the signed
  // subject confirmation must answer this very request too, or a captured assertion could be re-wrapped into a
  // response to a request of ours (SAML profiles §4.1.4.2 requires it of an answer to an AuthnRequest).
  const answered = confirmations.map((c) => c.InResponseTo).filter(Boolean);
  if (!requestId || answered.length === 0 || answered.some((id) => id !== requestId)) {
    throw new SsoFailure('wrong_in_response_to', 'The signed assertion does not answer our sign-in request (its SubjectConfirmationData InResponseTo is missing or another).');
  }
  const recipients = confirmations.map((c) => c.Recipient).filter(Boolean);
  if (recipients.length === 0 || recipients.some((r) => r !== sp.acsUrl)) {
    throw new SsoFailure('wrong_recipient', `The assertion's Recipient (${recipients.join(', ') || 'none'}) is not our ACS ${sp.acsUrl}.`);
  }
  const notOnOrAfter = first(assertion, 'Conditions')?.$?.NotOnOrAfter ?? confirmations[0]?.NotOnOrAfter;
  const expiresAt = notOnOrAfter ? new Date(Date.parse(notOnOrAfter) + SAML_CLOCK_SKEW_MS) : new Date(Date.now() + LOGIN_STATE_SECONDS * 1000);

  const attributes = { ...((profile.attributes as Record<string, unknown> | undefined) ?? {}) };
  const fromAttributes = [attributes.email, attributes.mail, attributes['http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress']].find((v) => typeof v === 'string');
  const email = (typeof fromAttributes === 'string' ? fromAttributes : profile.nameID)?.trim().toLowerCase();
  if (!email || !email.includes('@')) throw new SsoFailure('no_email', 'The assertion carries no e-mail address (NameID or an `email` attribute).');
  return { email, attributes: { nameID: profile.nameID, ...attributes }, assertionId: assertion.$?.ID ?? '', issuer: idp.entityId, expiresAt };
}
