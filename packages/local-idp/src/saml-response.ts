/**
 * SAML 2.0 Responses as an identity provider sends them to a service provider's assertion consumer service: one
 * assertion for a bearer subject, its conditions, an AuthnStatement and the attributes `email`, `firstName`,
 * `lastName`, `groups`; the assertion and then the response signed (RSA-SHA256, exclusive c14n) with samlify's
 * signer. Every field can be set, so a test can make a response wrong in exactly one way.
 */
import { randomBytes } from 'node:crypto';
import samlify from './samlify.ts';
import type { Person } from './person.ts';

const ASSERTION_XPATH = "/*[local-name(.)='Response']/*[local-name(.)='Assertion']";
const EMAIL_FORMAT = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress';
const BASIC_FORMAT = 'urn:oasis:names:tc:SAML:2.0:attrname-format:basic';
const RSA_SHA256 = 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256';

export interface SamlSigner {
  /** PKCS#8 PEM. */
  privateKeyPem: string;
  /** The certificate's base64 DER (what KeyInfo carries). */
  certificateBase64: string;
}

export interface SamlResponseFields {
  issuer: string;
  /** The AuthnRequest's ID; absent for an unsolicited response. */
  inResponseTo?: string;
  /** The service provider's entity ID. */
  audience: string;
  /** The assertion consumer service: the response's Destination and the subject confirmation's Recipient. */
  acsUrl: string;
  person: Person;
  /** Default: now. */
  issueInstant?: Date;
  /** Default: 30 seconds before the issue instant. */
  notBefore?: Date;
  /** Of the conditions and the subject confirmation; default: 5 minutes after the issue instant. */
  notOnOrAfter?: Date;
  /** Default: a fresh random ID; a fixed one makes a replay. */
  assertionId?: string;
  responseId?: string;
  signAssertion: boolean;
  signResponse: boolean;
  /** The key that signs; its KeyInfo still names the IdP's certificate (a signature that does not verify). */
  signer: SamlSigner;
}

/** A SAML message ID: an NCName (starts with a letter or `_`). */
export const samlId = () => `_${randomBytes(20).toString('hex')}`;

/** The base64 value of the `SAMLResponse` form field. */
export function buildSamlResponse(fields: SamlResponseFields): string {
  let xml = responseXml(fields);
  const config = { privateKey: fields.signer.privateKeyPem, signingCert: fields.signer.certificateBase64, signatureAlgorithm: RSA_SHA256, isBase64Output: false as const };
  if (fields.signAssertion) {
    xml = samlify.SamlLib.constructSAMLSignature({
      ...config,
      rawSamlMessage: xml,
      referenceTagXPath: ASSERTION_XPATH,
      signatureConfig: { prefix: 'ds', location: { reference: `${ASSERTION_XPATH}/*[local-name(.)='Issuer']`, action: 'after' } },
    });
  }
  if (fields.signResponse) {
    xml = samlify.SamlLib.constructSAMLSignature({
      ...config,
      rawSamlMessage: xml,
      isMessageSigned: true,
      signatureConfig: { prefix: 'ds', location: { reference: "/*[local-name(.)='Response']/*[local-name(.)='Issuer']", action: 'after' } },
    });
  }
  return Buffer.from(xml, 'utf8').toString('base64');
}

function responseXml(fields: SamlResponseFields): string {
  const issued = fields.issueInstant ?? new Date();
  const instant = issued.toISOString();
  const notBefore = (fields.notBefore ?? new Date(issued.getTime() - 30_000)).toISOString();
  const notOnOrAfter = (fields.notOnOrAfter ?? new Date(issued.getTime() + 5 * 60_000)).toISOString();
  const inResponseTo = fields.inResponseTo === undefined ? '' : ` InResponseTo="${xml(fields.inResponseTo)}"`;
  const { person } = fields;
  const attributes = [
    attribute('email', [person.email]),
    attribute('firstName', [person.firstName]),
    attribute('lastName', [person.lastName]),
    ...(person.groups.length ? [attribute('groups', person.groups)] : []),
  ].join('');
  return (
    `<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="${xml(fields.responseId ?? samlId())}" Version="2.0" IssueInstant="${instant}" Destination="${xml(fields.acsUrl)}"${inResponseTo}>` +
    `<saml:Issuer>${xml(fields.issuer)}</saml:Issuer>` +
    `<samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status>` +
    `<saml:Assertion xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xs="http://www.w3.org/2001/XMLSchema" ID="${xml(fields.assertionId ?? samlId())}" Version="2.0" IssueInstant="${instant}">` +
    `<saml:Issuer>${xml(fields.issuer)}</saml:Issuer>` +
    `<saml:Subject><saml:NameID Format="${EMAIL_FORMAT}">${xml(person.email)}</saml:NameID>` +
    `<saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer"><saml:SubjectConfirmationData NotOnOrAfter="${notOnOrAfter}" Recipient="${xml(fields.acsUrl)}"${inResponseTo}/></saml:SubjectConfirmation></saml:Subject>` +
    `<saml:Conditions NotBefore="${notBefore}" NotOnOrAfter="${notOnOrAfter}"><saml:AudienceRestriction><saml:Audience>${xml(fields.audience)}</saml:Audience></saml:AudienceRestriction></saml:Conditions>` +
    `<saml:AuthnStatement AuthnInstant="${instant}" SessionIndex="${samlId()}"><saml:AuthnContext><saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:unspecified</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>` +
    `<saml:AttributeStatement>${attributes}</saml:AttributeStatement>` +
    `</saml:Assertion></samlp:Response>`
  );
}

function attribute(name: string, values: string[]): string {
  const body = values.map((value) => `<saml:AttributeValue xsi:type="xs:string">${xml(value)}</saml:AttributeValue>`).join('');
  return `<saml:Attribute Name="${name}" NameFormat="${BASIC_FORMAT}">${body}</saml:Attribute>`;
}

const XML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' };
const xml = (text: string) => text.replace(/[&<>"']/g, (char) => XML_ESCAPES[char]!);
