/**
 * `startLocalIdp`: an identity provider for the local stack and the tests, on one HTTP server: a SAML 2.0 IdP under
 * `/saml` and an OpenID provider under `/oidc`. Signing in is a form that asks who you are (e-mail, name, groups) and
 * believes it: there are no passwords. Keys are made at start and live as long as the process.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type ErrorRequestHandler } from 'express';
import { generateLocalIdpKeys, samlSigningIdentity, unrelatedPrivateKeyPem, type LocalIdpKeys } from './keys.ts';
import { openIdProvider, type OidcClient } from './oidc.ts';
import { sendErrorPage } from './pages.ts';
import { personOf, type LocalIdpUser } from './person.ts';
import { samlIdentityProvider } from './saml.ts';
import { buildSamlResponse } from './saml-response.ts';

export interface LocalIdpOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0: a free port (read it back from `url`). */
  port?: number;
  /** Addresses the sign-in form suggests; a known address signing in with an empty name or groups gets these. */
  users?: LocalIdpUser[];
  /** The OpenID client's redirect URIs (more with `registerRedirectUri`). */
  redirectUris?: string[];
  /** Default `sigil-local`. */
  clientId?: string;
  /** Default: random. */
  clientSecret?: string;
  /** How the client authenticates at the token endpoint; default `client_secret_basic` (every provider supports it). */
  tokenEndpointAuthMethod?: OidcClient['tokenEndpointAuthMethod'];
  /** Default: new keys (see `generateLocalIdpKeys`). */
  keys?: LocalIdpKeys;
  /** Unexpected errors, one line each. */
  log?: (line: string) => void;
}

/** What `samlResponse` builds: a response to `acsUrl` for `email`, right unless told how to be wrong. */
export interface SamlResponseOptions {
  /** The AuthnRequest's ID; absent makes an unsolicited response. */
  inResponseTo?: string;
  /** The service provider's entity ID. */
  audience: string;
  acsUrl: string;
  email: string;
  name?: string;
  groups?: string[];
  notBefore?: Date;
  notOnOrAfter?: Date;
  /** Default true: the assertion and the response signed. False: neither. */
  signed?: boolean;
  /** Overrides `signed` for the assertion alone (an unsigned assertion inside a signed response). */
  signAssertion?: boolean;
  /** Overrides `signed` for the response alone. */
  signResponse?: boolean;
  /** Signed with a key that is not the certificate's: the signatures do not verify. */
  signWithOtherKey?: boolean;
  /** A fixed assertion ID (the same twice is a replay). */
  assertionId?: string;
  /** Default: this IdP's entity ID. */
  issuer?: string;
}

export interface LocalIdp {
  /** `http://host:port`. */
  url: string;
  saml: { entityId: string; metadataUrl: string; metadataXml: string; ssoUrl: string; signingCertPem: string };
  /** The provider (`issuer`, discovery at `<issuer>/.well-known/openid-configuration`) and its one client. */
  oidc: { issuer: string } & OidcClient;
  /** Lets the OpenID client redirect to `uri` (an exact match, as OpenID requires). */
  registerRedirectUri(uri: string): void;
  /** The base64 `SAMLResponse` POST value, built and signed like the sign-in flow's (for tests of what is refused). */
  samlResponse(options: SamlResponseOptions): string;
  close(): Promise<void>;
}

export async function startLocalIdp(options: LocalIdpOptions = {}): Promise<LocalIdp> {
  const host = options.host ?? '127.0.0.1';
  const log = options.log ?? (() => {});
  const users = options.users ?? [];
  const [keys, otherKeyPem] = await Promise.all([options.keys ?? generateLocalIdpKeys(), unrelatedPrivateKeyPem()]);
  const signer = samlSigningIdentity(keys.saml);
  const client: OidcClient = {
    clientId: options.clientId ?? 'sigil-local',
    clientSecret: options.clientSecret ?? randomBytes(24).toString('base64url'),
    tokenEndpointAuthMethod: options.tokenEndpointAuthMethod ?? 'client_secret_basic',
  };

  // Bound before anything is built: the issuer URLs carry the port.
  const app = express();
  app.disable('x-powered-by');
  const server = createServer(app);
  await listen(server, host, options.port ?? 0);
  const url = `http://${urlHost(host)}:${(server.address() as AddressInfo).port}`;

  const saml = samlIdentityProvider(url, signer, users);
  app.use('/saml', saml.router);
  const oidc = openIdProvider(url, client, options.redirectUris ?? [], keys.oidcJwk, users);
  app.use('/oidc/interaction', oidc.interactions);
  app.use('/oidc', oidc.handler);
  app.use((_req, res) => sendErrorPage(res, 404, 'Nothing here. The SAML metadata is at /saml/metadata and the OpenID configuration at /oidc/.well-known/openid-configuration.'));
  app.use(errorHandler(log));

  return {
    url,
    saml: { ...saml.endpoints, signingCertPem: signer.certificatePem },
    oidc: { issuer: oidc.issuer, ...client },
    registerRedirectUri: oidc.registerRedirectUri,
    samlResponse(response) {
      const signed = response.signed ?? true;
      return buildSamlResponse({
        issuer: response.issuer ?? saml.endpoints.entityId,
        inResponseTo: response.inResponseTo,
        audience: response.audience,
        acsUrl: response.acsUrl,
        person: personOf({ email: response.email, name: response.name, groups: response.groups }),
        notBefore: response.notBefore,
        notOnOrAfter: response.notOnOrAfter,
        assertionId: response.assertionId,
        signAssertion: response.signAssertion ?? signed,
        signResponse: response.signResponse ?? signed,
        signer: response.signWithOtherKey ? { ...signer, privateKeyPem: otherKeyPem } : signer,
      });
    },
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

function errorHandler(log: (line: string) => void): ErrorRequestHandler {
  return (error, req, res, _next) => {
    const status = typeof error?.status === 'number' && error.status >= 400 && error.status < 500 ? (error.status as number) : 500;
    if (status === 500) log(`error on ${req.method} ${req.path}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    sendErrorPage(res, status, status === 500 ? 'The local identity provider failed; its log says why.' : 'The request could not be read.');
  };
}

function listen(server: Server, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** A host as it is written in a URL: brackets around IPv6, and a reachable address for "every interface". */
function urlHost(host: string): string {
  if (host === '0.0.0.0' || host === '::') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}
