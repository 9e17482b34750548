import { AppError, notFound } from '@sigil/kit/errors';
import { newId } from '@sigil/kit/ids';
import { featureNotOnPlan, overAllowance, type EntitlementsCache } from '@sigil/kit/entitlements';
import type { Principal } from '@sigil/kit/auth';
import type { components } from '@sigil/proto/api/sigil';
import type { Db } from '../db.ts';
import { lockOrganization } from '../organizations.ts';
import { isUniqueViolation } from '../views.ts';
import { recordSsoAudit } from './audit.ts';
import { normalizeDomains } from './domains.ts';
import { parseIdpMetadata, type IdpMetadata } from './idp-metadata.ts';
import { checkOidcIssuer } from './oidc-rp.ts';
import { fetchMetadataXml, type SsoOutbound } from './outbound.ts';
import { sealClientSecret } from './secrets.ts';
import { oidcRedirectUri, samlServiceProvider } from './urls.ts';

type Settings = components['schemas']['UpdateSsoConnectionSettings'];
export type SsoConnectionRow = NonNullable<Awaited<ReturnType<Db['ssoConnection']['findUnique']>>>;
type WithDomains = SsoConnectionRow & { domains: { domain: string }[] };
/** The columns a PUT may set. */
type SettingsChange = Partial<Omit<SsoConnectionRow, 'id' | 'organizationId' | 'providerId' | 'protocol' | 'createdAt' | 'updatedAt'>>;

/** The admin's name of a new connection; names stored before this rule keep working. */
const PROVIDER_ID = /^[a-z0-9-]{2,40}$/;

const field = (pointer: string, detail: string, message: string) => new AppError('validation-failed', message, { errors: [{ pointer, detail }] });

export function toConnectionView(connection: WithDomains, publicUrl: string) {
  const failing = connection.lastErrorAt !== null && (connection.lastSuccessAt === null || connection.lastErrorAt > connection.lastSuccessAt);
  const base = {
    object: 'sso_connection' as const,
    providerId: connection.providerId,
    type: connection.protocol as 'saml' | 'oidc',
    protocol: connection.protocol as 'saml' | 'oidc',
    domains: connection.domains.map((d) => d.domain).sort(),
    enforced: connection.enforced,
    defaultRole: connection.defaultRole as components['schemas']['Role'],
    jitProvisioning: connection.jitProvisioning,
    status: failing ? ('failing' as const) : ('active' as const),
    health: {
      lastSuccessAt: connection.lastSuccessAt?.toISOString() ?? null,
      lastError: failing ? connection.lastError : null,
      lastErrorAt: connection.lastErrorAt?.toISOString() ?? null,
      certificateExpiresAt: connection.certificateExpiresAt?.toISOString() ?? null,
    },
    createdAt: connection.createdAt.toISOString(),
    updatedAt: connection.updatedAt.toISOString(),
  };
  if (connection.protocol === 'saml') {
    return {
      ...base,
      ...samlServiceProvider(publicUrl, connection.organizationId, connection.providerId),
      idpEntityId: connection.idpEntityId,
      idpSsoUrl: connection.idpSsoUrl,
      idpMetadataUrl: connection.idpMetadataUrl,
    };
  }
  return {
    ...base,
    issuer: connection.oidcIssuer ?? '',
    clientId: connection.oidcClientId ?? '',
    clientSecretSet: Boolean(connection.oidcClientSecret),
    redirectUri: oidcRedirectUri(publicUrl),
  };
}

export type SsoConnectionView = ReturnType<typeof toConnectionView>;

export interface ConnectionServiceDeps {
  db: Db;
  entitlements: EntitlementsCache;
  outbound: SsoOutbound;
  secretsKey: Buffer;
  publicUrl: string;
  clock: () => Date;
}

/** The organization's SSO connections: created and changed by `PUT .../settings`, within the plan's allowance. */
export function createConnectionService(deps: ConnectionServiceDeps) {
  const { db, publicUrl } = deps;

  async function find(organizationId: string, providerId: string): Promise<WithDomains> {
    const connection = await db.ssoConnection.findUnique({ where: { organizationId_providerId: { organizationId, providerId } }, include: { domains: true } });
    if (!connection) throw notFound(`SSO connection ${providerId}`);
    return connection;
  }

  /** The IdP's metadata from the body: pasted XML or a URL fetched through the public fetch. */
  async function samlMetadata(body: Settings): Promise<(IdpMetadata & { xml: string; url: string | null }) | undefined> {
    if (body.metadataXml !== undefined && body.metadataUrl !== undefined) {
      throw field('/body/metadataUrl', 'give either metadataXml or metadataUrl', 'Give the identity provider metadata either as metadataXml or as metadataUrl, not both.');
    }
    if (body.metadataUrl !== undefined) {
      const xml = await fetchMetadataXml(deps.outbound, body.metadataUrl, '/body/metadataUrl');
      return { ...(await parseIdpMetadata(xml, '/body/metadataUrl')), xml, url: body.metadataUrl };
    }
    if (body.metadataXml !== undefined) return { ...(await parseIdpMetadata(body.metadataXml)), xml: body.metadataXml, url: null };
    return undefined;
  }

  return {
    find,

    async list(organizationId: string) {
      const rows = await db.ssoConnection.findMany({ where: { organizationId }, include: { domains: true }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
      return { object: 'list' as const, data: rows.map((r) => toConnectionView(r, publicUrl)), hasMore: false, nextCursor: null };
    },

    async get(organizationId: string, providerId: string) {
      return toConnectionView(await find(organizationId, providerId), publicUrl);
    },

    /** Creates the connection when `providerId` is new, otherwise changes what the body names. */
    async save(principal: Principal, providerId: string, body: Settings, ip: string): Promise<SsoConnectionView> {
      const organizationId = principal.organizationId;
      const existing = await db.ssoConnection.findUnique({ where: { organizationId_providerId: { organizationId, providerId } }, include: { domains: true } });
      const entitlements = await deps.entitlements.get(organizationId);
      if (!existing) {
        if (!PROVIDER_ID.test(providerId)) {
          throw field('/path/providerId', 'must be 2 to 40 lower-case letters, digits or hyphens', 'A new connection name must be 2 to 40 lower-case letters, digits or hyphens.');
        }
        if (!body.protocol) throw field('/body/protocol', 'is required for a new connection', 'Say which protocol the new connection uses: saml or oidc.');
        if (body.domains === undefined) throw field('/body/domains', 'is required for a new connection', 'Give the e-mail domains the new connection signs in.');
      } else if (body.protocol && body.protocol !== existing.protocol) {
        throw field('/body/protocol', `is ${existing.protocol} and cannot change`, `The connection uses ${existing.protocol}; create another connection for ${body.protocol}.`);
      }
      if (body.enforced === true && !entitlements.features.enforcedSso) throw featureNotOnPlan(entitlements, 'enforcedSso');
      if (body.defaultRole === 'owner') {
        throw field('/body/defaultRole', 'cannot be owner', 'Members created by SSO cannot become owners automatically; choose admin, member or viewer.');
      }
      const protocol = (existing?.protocol ?? body.protocol) as 'saml' | 'oidc';
      const connectionId = existing?.id ?? newId('ssoc');

      const data: SettingsChange = {};
      if (body.enforced !== undefined) data.enforced = body.enforced;
      if (body.defaultRole !== undefined) data.defaultRole = body.defaultRole;
      if (body.jitProvisioning !== undefined) data.jitProvisioning = body.jitProvisioning;
      if (protocol === 'saml') {
        for (const name of ['issuer', 'clientId', 'clientSecret'] as const) {
          if (body[name] !== undefined) throw field(`/body/${name}`, 'is for OIDC connections', `${name} belongs to OIDC connections; this one uses SAML.`);
        }
        const metadata = await samlMetadata(body);
        if (!existing && !metadata) throw field('/body/metadataXml', 'is required for a new SAML connection', 'Give the identity provider metadata (metadataXml or metadataUrl).');
        if (metadata) {
          Object.assign(data, {
            idpMetadataXml: metadata.xml,
            idpMetadataUrl: metadata.url,
            idpEntityId: metadata.entityId,
            idpSsoUrl: metadata.ssoUrl,
            idpCertificates: metadata.certificates,
            certificateExpiresAt: metadata.certificateExpiresAt,
          });
        }
      } else {
        for (const name of ['metadataXml', 'metadataUrl'] as const) {
          if (body[name] !== undefined) throw field(`/body/${name}`, 'is for SAML connections', `${name} belongs to SAML connections; this one uses OIDC.`);
        }
        const issuer = body.issuer ?? existing?.oidcIssuer;
        const clientId = body.clientId ?? existing?.oidcClientId;
        if (!issuer) throw field('/body/issuer', 'is required for a new OIDC connection', 'Give the OpenID provider issuer URL.');
        if (!clientId) throw field('/body/clientId', 'is required for a new OIDC connection', 'Give the client id registered at the provider.');
        if (!existing && !body.clientSecret) throw field('/body/clientSecret', 'is required for a new OIDC connection', 'Give the client secret registered at the provider.');
        if (body.issuer !== undefined || body.clientId !== undefined) await checkOidcIssuer(deps.outbound, issuer, clientId);
        Object.assign(data, { oidcIssuer: issuer.replace(/\/$/, ''), oidcClientId: clientId });
        if (body.clientSecret !== undefined) data.oidcClientSecret = sealClientSecret(deps.secretsKey, connectionId, body.clientSecret);
      }
      const domains = body.domains === undefined ? undefined : normalizeDomains(body.domains);
      if (domains) await refuseTakenDomains(db, domains, connectionId);

      try {
        const saved = await db.$transaction(async (tx) => {
          await lockOrganization(tx, organizationId);
          const now = deps.clock();
          if (!existing) {
            const count = await tx.ssoConnection.count({ where: { organizationId } });
            if (count >= (entitlements.features.ssoConnections ?? 0)) throw overAllowance(entitlements, 'ssoConnections', { one: 'SSO connection', many: 'SSO connections' });
            await tx.ssoConnection.create({ data: { id: connectionId, organizationId, providerId, protocol, ...data, createdAt: now, updatedAt: now } });
          } else {
            await tx.ssoConnection.update({ where: { id: connectionId }, data: { ...data, updatedAt: now } });
          }
          if (domains) {
            await tx.ssoDomain.deleteMany({ where: { connectionId } });
            await tx.ssoDomain.createMany({ data: domains.map((domain) => ({ domain, connectionId })) });
          }
          const changed = Object.keys(body).filter((k) => k !== 'clientSecret' && k !== 'metadataXml');
          await recordSsoAudit(tx, {
            organizationId,
            action: existing ? 'connection.updated' : 'connection.created',
            actor: { type: 'member', id: principal.userId ?? principal.actorId },
            providerId,
            details: {
              protocol,
              changed: [...changed, ...(body.metadataXml !== undefined ? ['metadataXml'] : []), ...(body.clientSecret !== undefined ? ['clientSecret'] : [])],
              ...(domains ? { domains } : {}),
              ...(body.enforced !== undefined ? { enforced: body.enforced } : {}),
              ...(body.defaultRole !== undefined ? { defaultRole: body.defaultRole } : {}),
              ...(body.jitProvisioning !== undefined ? { jitProvisioning: body.jitProvisioning } : {}),
            },
            ip,
            at: now,
          });
          return tx.ssoConnection.findUniqueOrThrow({ where: { id: connectionId }, include: { domains: true } });
        });
        return toConnectionView(saved, publicUrl);
      } catch (error) {
        if (isUniqueViolation(error)) {
          if (domains) await refuseTakenDomains(db, domains, connectionId);
          throw new AppError('conflict', 'The connection changed at the same time; try again.');
        }
        throw error;
      }
    },
  };
}

/** A domain signs in through one connection only, across all organizations (409 beside the first taken one). */
async function refuseTakenDomains(db: Db, domains: string[], connectionId: string): Promise<void> {
  const taken = await db.ssoDomain.findMany({ where: { domain: { in: domains }, connectionId: { not: connectionId } } });
  if (taken.length === 0) return;
  const first = taken[0]!.domain;
  throw new AppError('conflict', `The domain ${first} already belongs to another SSO connection; a domain signs in through one connection only.`, {
    errors: taken.map((t) => ({ pointer: `/body/domains/${domains.indexOf(t.domain)}`, detail: 'belongs to another SSO connection' })),
  });
}

export type ConnectionService = ReturnType<typeof createConnectionService>;
