/**
 * The SAML 2.0 identity provider: metadata (samlify's IdentityProvider), SP-initiated sign-in by the HTTP-Redirect or
 * HTTP-POST binding, and the response posted back to the AuthnRequest's assertion consumer service.
 *
 * Any service provider may ask (there is no SP registry): the audience is the AuthnRequest's Issuer and the response
 * goes to the AssertionConsumerServiceURL it names. AuthnRequests are not required to be signed.
 */
import { randomBytes } from 'node:crypto';
import express, { Router, type Request, type Response } from 'express';
import samlify from './samlify.ts';
import { sendAutoPostPage, sendErrorPage, sendSignInPage } from './pages.ts';
import { personFromForm, type LocalIdpUser } from './person.ts';
import { buildSamlResponse, type SamlSigner } from './saml-response.ts';

const POST_BINDING = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST';
const REDIRECT_BINDING = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect';
const EMAIL_FORMAT = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress';
/** How long a sign-in form stays usable. */
const PENDING_TTL_MS = 10 * 60_000;
const MAX_PENDING = 1000;

export interface SamlEndpoints {
  entityId: string;
  metadataUrl: string;
  ssoUrl: string;
  metadataXml: string;
}

interface PendingRequest {
  id: string;
  issuer: string;
  acsUrl: string;
  relayState: string | undefined;
  expires: number;
}

/** The endpoints under `<baseUrl>/saml` and the router that serves them (mounted at `/saml`). */
export function samlIdentityProvider(baseUrl: string, signer: SamlSigner & { certificatePem: string }, users: LocalIdpUser[]): { endpoints: SamlEndpoints; router: Router } {
  const entityId = `${baseUrl}/saml/metadata`;
  const ssoUrl = `${baseUrl}/saml/sso`;
  const idp = withoutSloWarning(() =>
    samlify.IdentityProvider({
      entityID: entityId,
      signingCert: signer.certificatePem,
      nameIDFormat: [EMAIL_FORMAT],
      wantAuthnRequestsSigned: false,
      singleSignOnService: [
        { Binding: REDIRECT_BINDING, Location: ssoUrl },
        { Binding: POST_BINDING, Location: ssoUrl },
      ],
    }),
  );
  const endpoints = { entityId, metadataUrl: entityId, ssoUrl, metadataXml: idp.getMetadata() };
  const pending = new Map<string, PendingRequest>();

  const signInPage = (key: string, request: PendingRequest, error?: string) => ({
    action: `${baseUrl}/saml/sign-in/${key}`,
    requester: request.issuer,
    protocol: 'SAML' as const,
    knownEmails: users.map((user) => user.email),
    error,
  });

  const router = Router();
  router.use(express.urlencoded({ extended: false, limit: '256kb' }));
  router.get('/metadata', (_req, res) => {
    res.type('application/samlmetadata+xml').set('Cache-Control', 'no-store').send(endpoints.metadataXml);
  });
  const authnRequest = (req: Request, res: Response) => {
    const fields = (req.method === 'GET' ? req.query : req.body) as Record<string, unknown>;
    const parsed = parseAuthnRequest(fields.SAMLRequest, req.method === 'GET' ? 'redirect' : 'post');
    if ('error' in parsed) return sendErrorPage(res, 400, parsed.error);
    prune(pending);
    const key = randomBytes(16).toString('base64url');
    const request = { ...parsed, relayState: typeof fields.RelayState === 'string' ? fields.RelayState : undefined, expires: Date.now() + PENDING_TTL_MS };
    pending.set(key, request);
    sendSignInPage(res, signInPage(key, request));
  };
  router.get('/sso', authnRequest);
  router.post('/sso', authnRequest);
  router.post('/sign-in/:key', (req, res) => {
    const request = pending.get(req.params.key);
    if (!request || request.expires < Date.now()) {
      return sendErrorPage(res, 400, 'This sign-in expired or was already used. Start again from the application.');
    }
    const person = personFromForm((req.body ?? {}) as Record<string, unknown>, users);
    if ('error' in person) return sendSignInPage(res, signInPage(req.params.key, request, person.error), 400);
    pending.delete(req.params.key);
    const samlResponse = buildSamlResponse({ issuer: entityId, inResponseTo: request.id, audience: request.issuer, acsUrl: request.acsUrl, person, signAssertion: true, signResponse: true, signer });
    sendAutoPostPage(res, request.acsUrl, { SAMLResponse: samlResponse, RelayState: request.relayState });
  });
  return { endpoints, router };
}

/** The AuthnRequest's ID, Issuer and assertion consumer service, or why it cannot be served. */
function parseAuthnRequest(value: unknown, binding: 'redirect' | 'post'): Omit<PendingRequest, 'relayState' | 'expires'> | { error: string } {
  if (typeof value !== 'string' || !value) return { error: 'The request has no SAMLRequest: start the sign-in from the application.' };
  let extracted: { request?: { id?: string; assertionConsumerServiceUrl?: string }; issuer?: string };
  try {
    const xml = binding === 'redirect' ? samlify.Utility.inflateString(value) : Buffer.from(value, 'base64').toString('utf8');
    extracted = samlify.Extractor.extract(xml, samlify.Extractor.loginRequestFields) as typeof extracted;
  } catch {
    return { error: 'The SAMLRequest is not a readable AuthnRequest.' };
  }
  const id = extracted.request?.id;
  const acsUrl = extracted.request?.assertionConsumerServiceUrl;
  const issuer = typeof extracted.issuer === 'string' ? extracted.issuer : undefined;
  if (!id || !issuer) return { error: 'The AuthnRequest has no ID or no Issuer.' };
  // No SP registry here: the request must say where the response goes.
  if (!acsUrl || !/^https?:\/\//.test(acsUrl)) return { error: 'The AuthnRequest names no AssertionConsumerServiceURL; this identity provider needs one.' };
  return { id, issuer, acsUrl };
}

/**
 * samlify warns on the console when an IdP has no SingleLogoutService. This one has none on purpose (it keeps no
 * session to end, and without an SP registry it would not know where to send a LogoutResponse): the warning is not
 * printed into the terminal of everyone running the local stack.
 */
function withoutSloWarning<T>(build: () => T): T {
  const warn = console.warn;
  console.warn = (...args: unknown[]) => {
    if (!String(args[0]).includes('missing endpoint of SingleLogoutService')) warn(...args);
  };
  try {
    return build();
  } finally {
    console.warn = warn;
  }
}

function prune(pending: Map<string, PendingRequest>): void {
  const now = Date.now();
  for (const [key, request] of pending) if (request.expires < now) pending.delete(key);
  // Oldest first: a flood of abandoned sign-ins cannot grow the map without bound.
  while (pending.size >= MAX_PENDING) pending.delete(pending.keys().next().value!);
}
