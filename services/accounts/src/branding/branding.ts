import { notFound } from '@sigil/kit/errors';
import type { EntitlementsCache } from '@sigil/kit/entitlements';
import type { OrganizationBranding } from '@sigil/proto/internal-branding';
import type { components } from '@sigil/proto/api/sigil';
import type { Db, Tx } from '../db.ts';
import { renderPreview, parseTemplate } from './preview.ts';
import { allowedBy, applyChange, checkAgainstPlan, effectiveFields, parseBrandingChange, type BrandingFields } from './rules.ts';

export type EmailBrandingView = components['schemas']['EmailBranding'] & { logoUrl: string | null };
export type OrganizationSettingsView = components['schemas']['OrganizationSettings'];

export interface BrandingServiceDeps {
  db: Db;
  entitlements: EntitlementsCache;
  /** The gateway's public URL: logo URLs and the preview's sample links are under it. */
  publicUrl: string;
  clock: () => Date;
  /** Tells the services that cache branding (envelopes, signing) that it changed; called after the commit. */
  notifyChanged: (organizationId: string) => void;
}

const NONE: BrandingFields & { logoFile: string | null } = { displayName: null, customMessage: null, footer: null, removePoweredBy: false, logoFile: null };

/** `<publicUrl>/v1/public/logos/<org>/<file>`: the logo's public, immutable URL. */
export const logoUrlOf = (publicUrl: string, organizationId: string, file: string): string =>
  `${publicUrl.replace(/\/+$/, '')}/v1/public/logos/${encodeURIComponent(organizationId)}/${encodeURIComponent(file)}`;

export async function savedBranding(conn: Db | Tx, organizationId: string): Promise<BrandingFields & { logoFile: string | null }> {
  const row = await conn.emailBranding.findUnique({ where: { organizationId } });
  return row ? { displayName: row.displayName, customMessage: row.customMessage, footer: row.footer, removePoweredBy: row.removePoweredBy, logoFile: row.logoFile } : NONE;
}

/** The branding in effect (what is saved, as the plan allows it today): the internal endpoint's and invitations'. */
export async function effectiveBranding(deps: Pick<BrandingServiceDeps, 'db' | 'entitlements' | 'publicUrl'>, organizationId: string): Promise<OrganizationBranding> {
  const saved = await savedBranding(deps.db, organizationId);
  const allowed = allowedBy(await deps.entitlements.get(organizationId));
  const logoUrl = allowed.custom && saved.logoFile ? logoUrlOf(deps.publicUrl, organizationId, saved.logoFile) : null;
  return { organizationId, ...effectiveFields(saved, allowed), logoUrl };
}

/** E-mail branding (`/v1/organization/email-branding*`), the branding other services read, and the settings' flags. */
export function createBrandingService(deps: BrandingServiceDeps) {
  const logoUrl = (organizationId: string, file: string | null) => (file ? logoUrlOf(deps.publicUrl, organizationId, file) : null);

  async function organizationName(organizationId: string): Promise<string> {
    const organization = await deps.db.organization.findUnique({ where: { id: organizationId }, select: { name: true } });
    if (!organization) throw notFound(`Organization ${organizationId}`);
    return organization.name;
  }

  async function view(organizationId: string, saved: BrandingFields & { logoFile: string | null }): Promise<EmailBrandingView> {
    const allowed = allowedBy(await deps.entitlements.get(organizationId));
    return {
      object: 'email_branding',
      displayName: saved.displayName,
      customMessage: saved.customMessage,
      footer: saved.footer,
      removePoweredBy: saved.removePoweredBy,
      logoUrl: logoUrl(organizationId, saved.logoFile),
      allowed: { ...allowed },
    };
  }

  return {
    /** The flags of the plan and its add-ons (`sms`, `branding`, ...): what the dashboard shows or hides. */
    async settings(organizationId: string): Promise<OrganizationSettingsView> {
      const entitlements = await deps.entitlements.get(organizationId);
      return { object: 'organization_settings', plan: entitlements.plan, features: { ...entitlements.features } };
    },

    /** What is saved (a downgraded plan keeps it, unused) and what the plan allows (`allowed`). */
    async get(organizationId: string): Promise<EmailBrandingView> {
      return view(organizationId, await savedBranding(deps.db, organizationId));
    },

    /** A partial change: absent fields keep their value, null clears one (always allowed); `logoUrl: null` drops the logo. */
    async update(organizationId: string, body: unknown): Promise<EmailBrandingView> {
      const change = parseBrandingChange(body);
      checkAgainstPlan(change, await deps.entitlements.get(organizationId));
      const saved = await deps.db.$transaction(async (tx) => {
        const next = applyChange(await savedBranding(tx, organizationId), change);
        const data = { ...next, ...(change.logoUrl === null ? { logoFile: null } : {}), updatedAt: deps.clock() };
        const row = await tx.emailBranding.upsert({ where: { organizationId }, create: { organizationId, ...data }, update: data });
        return { ...next, logoFile: row.logoFile };
      });
      deps.notifyChanged(organizationId);
      return view(organizationId, saved);
    },

    /** A sample e-mail with the saved branding, or with `branding` (unsaved, over the saved) checked like a change. */
    async preview(organizationId: string, body: { branding?: unknown; template?: unknown } | undefined) {
      const kind = parseTemplate(body?.template);
      const entitlements = await deps.entitlements.get(organizationId);
      const saved = await savedBranding(deps.db, organizationId);
      let fields: BrandingFields = saved;
      let logoFile = saved.logoFile;
      if (body?.branding !== undefined) {
        const change = parseBrandingChange(body.branding, '/body/branding');
        checkAgainstPlan(change, entitlements, '/body/branding');
        fields = applyChange(saved, change);
        if (change.logoUrl === null) logoFile = null;
      }
      const allowed = allowedBy(entitlements);
      const branding = { ...effectiveFields(fields, allowed), logoUrl: allowed.custom ? logoUrl(organizationId, logoFile) : null };
      return renderPreview(kind, await organizationName(organizationId), branding, deps.publicUrl, deps.clock());
    },

    /** The branding in effect, for the internal endpoint (proto/src/internal-branding.ts). */
    effective: (organizationId: string): Promise<OrganizationBranding> => effectiveBranding(deps, organizationId),
  };
}

export type BrandingService = ReturnType<typeof createBrandingService>;
