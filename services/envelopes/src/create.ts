import type { Principal } from '@sigil/kit/auth';
import { enqueueEvent, enqueueJob } from '@sigil/kit/bus';
import { newId } from '@sigil/kit/ids';
import type { components } from '@sigil/proto/api/sigil';
import type { TemplateVersionSnapshot } from '@sigil/proto/internal-templates';
import { creationTestMode } from './caller.ts';
import { invalid, planEnvelope, requestedVersion, type EnvelopePlan } from './create-input.ts';
import type { PlanLimits } from './plan-limits.ts';
import { announceViewers, checkViewerPlan, planViewers, viewerRows } from './viewers.ts';
import type { Db, Tx } from './db.ts';
import { renderOriginal } from './render-pdf.ts';
import type { Caller, TemplatesClient } from './templates-client.ts';
import { nextTurn } from './state.ts';
import { ENVELOPE_INCLUDE, toEnvelopeView, type EnvelopeView } from './views.ts';

/**
 * The render job's name on the jobs stream. The jobs stream is a work queue, where one subject has one consumer: stacks
 * that share a NATS server (tests) each put their cell (CONSUMER_PREFIX) in the subject. Production uses no cell.
 */
export const renderJobName = (cell = ''): string => `${cell ? `${cell.toLowerCase()}.` : ''}envelopes.render`;

type CreateEnvelope = components['schemas']['CreateEnvelope'];

export interface CreateDeps {
  db: Db;
  templates: TemplatesClient;
  clock: () => Date;
  defaultExpiryDays: number;
  cell?: string;
  /** The plan's limits (billing's entitlements); none: no plan applies (a service test of sending alone). */
  planLimits?: PlanLimits;
}

export type CreateResult =
  | { kind: 'created'; envelope: EnvelopeView }
  | { kind: 'deduplicated'; envelope: EnvelopeView }
  | { kind: 'dry-run'; result: DryRunView };

/**
 * The answer of `dry_run`: the contract's EnvelopeDryRun (which fixes some members and allows more) as this service
 * fills it; `wouldSend` is what sending would do now: the recipients of the first turn, each e-mailed their link or,
 * embedded, waiting for a session.
 */
function dryRunView(snapshot: TemplateVersionSnapshot, plan: EnvelopePlan, testMode: boolean) {
  const first = new Set(nextTurn(plan.recipients.map((r) => ({ id: r.role, order: r.order, status: 'pending' }))).start);
  return {
    object: 'envelope_dry_run',
    valid: true,
    testMode,
    template: snapshot.templateId,
    templateVersion: snapshot.version,
    pageCount: snapshot.pageCount,
    recipients: plan.recipients.map((r) => ({ role: r.role, name: r.name, email: r.email, order: r.order, delivery: r.delivery, verification: r.verification, firstTurn: first.has(r.role) })),
    wouldSend: plan.recipients.filter((r) => first.has(r.role)).map((r) => ({ role: r.role, email: r.email, via: r.delivery })),
    expiresAt: plan.expiresAt.toISOString(),
  } satisfies components['schemas']['EnvelopeDryRun'];
}

export type DryRunView = ReturnType<typeof dryRunView>;

/**
 * `POST /v1/envelopes`: checks the template version synchronously (recording its use, so the template's delete rule
 * holds at once), writes the envelope and its recipients with `envelope.created` and the render job in one transaction.
 * `dedupeOn: external_id` holds under concurrency through the primary key of `envelope_dedupe_keys`.
 */
export function createEnvelopeCreator(deps: CreateDeps) {
  async function findByExternalId(db: Db | Tx, organizationId: string, testMode: boolean, externalId: string): Promise<EnvelopeView | undefined> {
    const key = await db.envelopeDedupeKey.findUnique({ where: { organizationId_testMode_externalId: { organizationId, testMode, externalId } } });
    const row = await db.envelope.findFirst({
      where: key ? { id: key.envelopeId } : { organizationId, testMode, externalId },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
      include: ENVELOPE_INCLUDE,
    });
    return row ? toEnvelopeView(row) : undefined;
  }

  /** A 400 naming `template` when the template is missing or deleted, `version` when only that version is. */
  async function versionNotFound(caller: Caller, input: CreateEnvelope, version: number | 'latest') {
    const templateExists = version !== 'latest' && (await deps.templates.version(caller, input.template, 'latest')) !== undefined;
    return templateExists
      ? invalid([{ pointer: '/body/version', detail: `is not a published version of template ${input.template}` }])
      : invalid([{ pointer: '/body/template', detail: version === 'latest' ? 'does not exist or has no published version' : 'does not exist' }]);
  }

  async function dryRun(caller: Caller, input: CreateEnvelope, testMode: boolean): Promise<DryRunView> {
    const version = requestedVersion(input.version);
    const snapshot = await deps.templates.version(caller, input.template, version);
    if (!snapshot) throw await versionNotFound(caller, input, version);
    const plan = planEnvelope(input, snapshot, deps.clock(), deps.defaultExpiryDays);
    // Rendering proves the document can be made; its bytes are not kept.
    await renderOriginal(await deps.templates.document(caller, input.template, snapshot.version), snapshot.fields, plan.variables, testMode);
    return dryRunView(snapshot, plan, testMode);
  }

  async function insert(tx: Tx, principal: Principal, id: string, input: CreateEnvelope, snapshot: TemplateVersionSnapshot, plan: EnvelopePlan, testMode: boolean): Promise<EnvelopeView> {
    const row = await tx.envelope.create({
      data: {
        id,
        organizationId: principal.organizationId,
        testMode,
        status: 'rendering',
        templateId: snapshot.templateId,
        templateVersion: snapshot.version,
        templateName: snapshot.templateName,
        externalId: input.externalId ?? null,
        metadata: input.metadata ?? {},
        variables: plan.variables,
        fields: snapshot.fields as object[],
        pages: snapshot.pages,
        cc: (input.cc ?? []) as object[],
        viewers: { create: viewerRows(principal.organizationId, planViewers(input.viewers ?? []), deps.clock()) },
        reminders: input.reminders ?? undefined,
        createdBy: { kind: principal.kind, id: principal.actorId },
        expiresAt: plan.expiresAt,
        recipients: { create: plan.recipients.map((r, position) => ({ id: newId('rcp'), ...r, position, status: 'pending' })) },
      },
      include: ENVELOPE_INCLUDE,
    });
    const envelope = toEnvelopeView(row);
    await enqueueEvent(tx, { type: 'envelope.created', organizationId: principal.organizationId, data: { envelopeId: id, templateId: snapshot.templateId, testMode, actor: { kind: principal.kind, id: principal.actorId }, envelope } });
    await announceViewers(tx, row, row.viewers, principal);
    await enqueueJob(tx, { name: renderJobName(deps.cell), id: `render-${id}`, data: { envelopeId: id } });
    return envelope;
  }

  return {
    /** `options.afterInsert` runs in the creating transaction (a signing link's cap and usage); throwing undoes the envelope. */
    async create(principal: Principal, input: CreateEnvelope, options: { dryRun: boolean; testModeFlag: unknown; afterInsert?: (tx: Tx, envelope: EnvelopeView) => Promise<void> }): Promise<CreateResult> {
      const testMode = creationTestMode(principal, options.testModeFlag);
      const caller: Caller = { organizationId: principal.organizationId, mode: testMode ? 'test' : 'live' };
      await deps.planLimits?.checkNewEnvelope({ organizationId: principal.organizationId, live: !testMode, recipients: input.recipients ?? [] });
      await checkViewerPlan(deps.planLimits, principal.organizationId, 0, planViewers(input.viewers ?? []));
      if (options.dryRun) return { kind: 'dry-run', result: await dryRun(caller, input, testMode) };
      const dedupe = input.dedupeOn === 'external_id' && input.externalId ? input.externalId : undefined;
      if (dedupe) {
        const existing = await findByExternalId(deps.db, principal.organizationId, testMode, dedupe);
        if (existing) return { kind: 'deduplicated', envelope: existing };
      }
      const version = requestedVersion(input.version);
      const id = newId('env');
      const snapshot = await deps.templates.use(caller, input.template, { version, usedBy: { kind: 'envelope', id } });
      if (!snapshot) throw await versionNotFound(caller, input, version);
      const plan = planEnvelope(input, snapshot, deps.clock(), deps.defaultExpiryDays);
      return deps.db.$transaction(async (tx): Promise<CreateResult> => {
        if (dedupe) {
          // Concurrent requests wait here for the first one's commit, then find its envelope.
          const claimed = await tx.$executeRawUnsafe(
            'INSERT INTO envelope_dedupe_keys (organization_id, test_mode, external_id, envelope_id) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING',
            principal.organizationId,
            testMode,
            dedupe,
            id,
          );
          if (claimed === 0) {
            const existing = await findByExternalId(tx, principal.organizationId, testMode, dedupe);
            if (existing) return { kind: 'deduplicated', envelope: existing };
          }
        }
        const envelope = await insert(tx, principal, id, input, snapshot, plan, testMode);
        await options.afterInsert?.(tx, envelope);
        return { kind: 'created', envelope };
      });
    },
  };
}

export type EnvelopeCreator = ReturnType<typeof createEnvelopeCreator>;
