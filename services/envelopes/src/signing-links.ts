import type { Principal } from '@sigil/kit/auth';
import { enqueueEvent } from '@sigil/kit/bus';
import { featureNotOnPlan, type EntitlementsCache } from '@sigil/kit/entitlements';
import { notFound } from '@sigil/kit/errors';
import { newId } from '@sigil/kit/ids';
import { newestFirst, type ListPage } from '@sigil/kit/pagination';
import type { components } from '@sigil/proto/api/sigil';
import type { Db } from './db.ts';
import { checkLinkRequest, linkLimits, type LinkRequest } from './signing-link-input.ts';
import { linkUsage, toSigningLinkView, type SigningLinkView } from './signing-link-views.ts';
import type { Caller, TemplatesClient } from './templates-client.ts';

type UpdateSigningLink = components['schemas']['UpdateSigningLink'] & { title?: string; status?: 'active' | 'paused'; limits?: Partial<components['schemas']['SigningLinkLimits']> };

export interface SigningLinkDeps {
  db: Db;
  templates: TemplatesClient;
  clock: () => Date;
  /** The organization's plan (billing's); none: no plan applies (a service test without billing). */
  entitlements?: EntitlementsCache;
}

/** A link belongs to one mode: the caller's (an API key's own; a dashboard session's current one). */
const modeOf = (principal: Principal) => principal.mode === 'test';

/**
 * `/v1/signing-links`: always-on links of a template version and a role. Creating (and resuming) one needs the plan's
 * `signingLinks`; the link's template use is recorded at once, so a template used by a link cannot be deleted.
 */
export function createSigningLinkService(deps: SigningLinkDeps) {
  async function requireFeature(organizationId: string): Promise<void> {
    if (!deps.entitlements) return;
    const entitlements = await deps.entitlements.get(organizationId);
    if (!entitlements.features.signingLinks) {
      throw featureNotOnPlan(entitlements, 'signingLinks', `Always-on signing links are not on the ${entitlements.planName} plan. Upgrade to Team or above to create or resume one.`);
    }
  }

  async function findLive(principal: Principal, id: string) {
    const row = await deps.db.signingLink.findFirst({ where: { id, organizationId: principal.organizationId, testMode: modeOf(principal), deletedAt: null } });
    if (!row) throw notFound(`Signing link ${id}`);
    return row;
  }

  return {
    async create(principal: Principal, input: LinkRequest, publicUrl: string): Promise<SigningLinkView> {
      await requireFeature(principal.organizationId);
      const testMode = modeOf(principal);
      const caller: Caller = { organizationId: principal.organizationId, mode: testMode ? 'test' : 'live' };
      const id = newId('lnk');
      const checked = await checkLinkRequest(deps.templates, caller, input, id, deps.clock());
      const row = await deps.db.$transaction(async (tx) => {
        const created = await tx.signingLink.create({
          data: {
            id,
            organizationId: principal.organizationId,
            testMode,
            templateId: checked.snapshot.templateId,
            templateVersion: checked.snapshot.version,
            role: checked.role,
            title: checked.title,
            ...checked.limits,
            variables: checked.variables,
            cc: checked.cc as object[],
            recipients: checked.recipients as object[],
            visitorFields: checked.visitorFields as object[],
            status: 'active',
            createdBy: { kind: principal.kind, id: principal.actorId },
            createdAt: deps.clock(),
          },
        });
        await enqueueEvent(tx, { type: 'signing_link.created', organizationId: principal.organizationId, data: { signingLinkId: id, templateId: checked.snapshot.templateId, testMode } });
        return created;
      });
      return toSigningLinkView(row, { today: 0, total: 0 }, publicUrl);
    },

    async list(principal: Principal, input: { limit: number; cursor?: string }, publicUrl: string): Promise<ListPage<SigningLinkView>> {
      const rows = await deps.db.signingLink.findMany({
        where: { organizationId: principal.organizationId, testMode: modeOf(principal), deletedAt: null, AND: [newestFirst.after(input.cursor)] },
        orderBy: newestFirst.orderBy,
        take: input.limit + 1,
      });
      const usage = await linkUsage(deps.db, rows.map((r) => r.id), deps.clock());
      return newestFirst.page(rows, input.limit, (row) => toSigningLinkView(row, usage.get(row.id), publicUrl));
    },

    /** One link of the caller's organization and mode, with its usage (404 when deleted or another mode's). */
    async get(principal: Principal, id: string, publicUrl: string): Promise<SigningLinkView> {
      const row = await findLive(principal, id);
      return toSigningLinkView(row, (await linkUsage(deps.db, [id], deps.clock())).get(id), publicUrl);
    },

    /** `PATCH`: any of title, limits, status (or `enabled`); resuming a paused link needs the plan's feature again. */
    async update(principal: Principal, id: string, input: UpdateSigningLink, publicUrl: string): Promise<SigningLinkView> {
      const current = await findLive(principal, id);
      const status = input.status ?? (input.enabled === undefined ? undefined : input.enabled ? 'active' : 'paused');
      if (status === 'active' && current.status !== 'active') await requireFeature(principal.organizationId);
      const limits = linkLimits({ ...current, ...input, ...input.limits }, '/body');
      const title = (input.title ?? input.name)?.trim();
      const row = await deps.db.signingLink.update({
        where: { id },
        data: { ...limits, ...(title ? { title } : {}), ...(status ? { status } : {}) },
      });
      return toSigningLinkView(row, (await linkUsage(deps.db, [id], deps.clock())).get(id), publicUrl);
    },

    /** `DELETE`: the link stops answering at once; the envelopes it created stay. */
    async remove(principal: Principal, id: string): Promise<void> {
      await findLive(principal, id);
      await deps.db.signingLink.update({ where: { id }, data: { deletedAt: deps.clock() } });
    },
  };
}

export type SigningLinkService = ReturnType<typeof createSigningLinkService>;
