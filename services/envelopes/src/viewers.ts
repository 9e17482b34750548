import type { Principal } from '@sigil/kit/auth';
import { enqueueEvent } from '@sigil/kit/bus';
import { AppError, notFound, type FieldError } from '@sigil/kit/errors';
import { newId } from '@sigil/kit/ids';
import type { components } from '@sigil/proto/api/sigil';
import { visibleTo } from './caller.ts';
import { invalid } from './create-input.ts';
import type { Db, Tx } from './db.ts';
import { lockEnvelope } from './envelopes.ts';
import type { PlanLimits } from './plan-limits.ts';
import type { EnvelopeViewer } from './generated/prisma/client.ts';
import { toViewerView, type EnvelopeRow } from './views.ts';

type ViewerInput = components['schemas']['AddEnvelopeViewers']['viewers'][number];

/** The envelope statuses viewers can be added in: an envelope in progress. */
const IN_PROGRESS = new Set(['rendering', 'sent']);

export interface PlannedViewer {
  email: string;
  name: string | null;
  documentAccess: boolean;
}

/** The viewers of a request as they will be stored (addresses lower-case); one address twice, or one already an active viewer, is a 400. */
export function planViewers(input: ReadonlyArray<Partial<ViewerInput> & { email: string }>, active: ReadonlyArray<{ email: string }> = [], pointer = '/body/viewers'): PlannedViewer[] {
  const errors: FieldError[] = [];
  const seen = new Set(active.map((v) => v.email));
  const planned = input.map((viewer, i) => {
    const email = viewer.email.toLowerCase();
    if (seen.has(email)) errors.push({ pointer: `${pointer}/${i}/email`, detail: 'is already a viewer of this envelope' });
    seen.add(email);
    return { email, name: viewer.name?.trim() || null, documentAccess: viewer.documentAccess ?? false };
  });
  if (errors.length > 0) throw invalid(errors);
  return planned;
}

type EnvelopeRef = Pick<EnvelopeRow, 'id' | 'organizationId' | 'testMode'>;

/** The rows of new viewers of an envelope (for a nested create, or `createMany`). */
export function viewerRows(organizationId: string, viewers: PlannedViewer[], now: Date) {
  return viewers.map((viewer) => ({ id: newId('vwr'), organizationId, ...viewer, createdAt: now }));
}

/** One `viewer.added` per new viewer (the mail consumer e-mails each its link), in the caller's transaction. */
export async function announceViewers(tx: Tx, envelope: EnvelopeRef, viewers: EnvelopeViewer[], principal: Principal): Promise<void> {
  for (const row of viewers) {
    await enqueueEvent(tx, {
      type: 'viewer.added',
      organizationId: envelope.organizationId,
      data: { envelopeId: envelope.id, testMode: envelope.testMode, viewerId: row.id, email: row.email, name: row.name, documentAccess: row.documentAccess, actor: { kind: principal.kind, id: principal.actorId } },
    });
  }
}

/** The plan's check of an envelope's viewers once `adding` joins the active ones. */
export async function checkViewerPlan(planLimits: PlanLimits | undefined, organizationId: string, activeCount: number, adding: ReadonlyArray<{ documentAccess?: boolean }>): Promise<void> {
  if (adding.length === 0) return;
  await planLimits?.checkViewers({ organizationId, total: activeCount + adding.length, documentAccess: adding.some((v) => v.documentAccess === true) });
}

/** `POST` and `DELETE /v1/envelopes/{id}/viewers…`: add viewers to an envelope in progress, revoke one at any time. */
export function createViewerService(deps: { db: Db; clock: () => Date; planLimits?: PlanLimits }) {
  return {
    /** 409 `conflict` once the envelope is completed, declined, voided or expired. */
    async add(principal: Principal, envelopeId: string, input: ViewerInput[]) {
      const data = await deps.db.$transaction(async (tx) => {
        const envelope = await lockEnvelope(tx, { ...visibleTo(principal), id: envelopeId });
        if (!IN_PROGRESS.has(envelope.status)) throw new AppError('conflict', `Envelope ${envelopeId} is ${envelope.status}: viewers can be added only while it is in progress.`);
        const active = envelope.viewers.filter((v) => v.revokedAt === null);
        const viewers = planViewers(input, active);
        await checkViewerPlan(deps.planLimits, envelope.organizationId, active.length, viewers);
        const rows = viewerRows(envelope.organizationId, viewers, deps.clock());
        await tx.envelopeViewer.createMany({ data: rows.map((row) => ({ ...row, envelopeId })) });
        const stored = new Map((await tx.envelopeViewer.findMany({ where: { id: { in: rows.map((r) => r.id) } } })).map((row) => [row.id, row]));
        // In the request's order.
        const added = rows.map((row) => stored.get(row.id) as EnvelopeViewer);
        await announceViewers(tx, envelope, added, principal);
        return added.map(toViewerView);
      });
      return { object: 'list' as const, data, hasMore: false, nextCursor: null } satisfies components['schemas']['ViewerList'];
    },

    /** The viewer's link and every access token stop at once, and signing closes its open streams (`viewer.revoked`). Revoking twice changes nothing. */
    async revoke(principal: Principal, envelopeId: string, viewerId: string): Promise<void> {
      await deps.db.$transaction(async (tx) => {
        const envelope = await lockEnvelope(tx, { ...visibleTo(principal), id: envelopeId });
        const viewer = envelope.viewers.find((v) => v.id === viewerId);
        if (!viewer) throw notFound(`Viewer ${viewerId} of envelope ${envelopeId}`);
        if (viewer.revokedAt) return;
        await tx.envelopeViewer.update({ where: { id: viewerId }, data: { revokedAt: deps.clock() } });
        await tx.viewerAccessToken.deleteMany({ where: { viewerId } });
        await enqueueEvent(tx, {
          type: 'viewer.revoked',
          organizationId: envelope.organizationId,
          data: { envelopeId, testMode: envelope.testMode, viewerId, email: viewer.email, actor: { kind: principal.kind, id: principal.actorId } },
        });
      });
    },
  };
}

export type ViewerService = ReturnType<typeof createViewerService>;
