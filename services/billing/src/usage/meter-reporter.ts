/**
 * Reports metered usage to the processor: completed envelopes beyond the included ones (the plan's overage) and the
 * add-ons, as running totals per organization, period and meter. Each pass reports the increase since the last
 * report, with an identifier made of the new total, so a pass repeated after a crash (reported, not yet recorded) is
 * dropped by the processor as a repeat. The period that just ended is reported once more (late completions).
 */
import type { ExclusiveWork } from '@sigil/kit/db';
import type { Logger } from '@sigil/kit/log';
import { accountState } from '../account/state.ts';
import { subscribedAccounts } from '../account/store.ts';
import type { Db } from '../db.ts';
import { overageOf, type Period } from '../plans/index.ts';
import type { MeterReport, Processor } from '../processor/processor.ts';
import { readUsage } from './read.ts';

export interface MeterReporterDeps {
  db: Db;
  processor: Processor;
  clock: () => Date;
  log: Logger;
}

/** One pass over every subscribed organization; answers how many reports were sent. */
export async function reportMeteredUsage(deps: MeterReporterDeps): Promise<number> {
  let sent = 0;
  const now = deps.clock();
  for (const row of await subscribedAccounts(deps.db)) {
    const state = accountState(row.organizationId, row, now);
    if (state.plan === 'free' || !state.customerId) continue;
    const previous: Period = { start: new Date(state.period.start.getTime() - (state.period.end.getTime() - state.period.start.getTime())), end: state.period.start };
    for (const period of [previous, state.period]) {
      try {
        sent += await reportPeriod(deps, { organizationId: row.organizationId, customerId: state.customerId, plan: state.plan }, period, now);
      } catch (error) {
        deps.log.warn({ err: error, organizationId: row.organizationId }, 'metered usage not reported; the next pass tries again');
      }
    }
  }
  return sent;
}

async function reportPeriod(deps: MeterReporterDeps, account: { organizationId: string; customerId: string; plan: Parameters<typeof overageOf>[0] }, period: Period, now: Date): Promise<number> {
  const counts = await readUsage(deps.db, account.organizationId, period, now);
  const totals: Record<MeterReport['meter'], number> = { envelopes: overageOf(account.plan, counts.completedEnvelopes), ...counts.addOns };
  const reported = await deps.db.meterReport.findMany({ where: { organizationId: account.organizationId, periodStart: period.start } });
  let sent = 0;
  for (const [meter, total] of Object.entries(totals) as Array<[MeterReport['meter'], number]>) {
    const already = reported.find((r) => r.meter === meter)?.reported ?? 0;
    if (total <= already) continue;
    await deps.processor.reportUsage({
      customerId: account.customerId,
      meter,
      quantity: total - already,
      identifier: `${account.organizationId}:${period.start.toISOString()}:${meter}:${total}`,
      at: now,
    });
    await deps.db.meterReport.upsert({
      where: { organizationId_periodStart_meter: { organizationId: account.organizationId, periodStart: period.start, meter } },
      create: { organizationId: account.organizationId, periodStart: period.start, meter, reported: total, updatedAt: now },
      update: { reported: total, updatedAt: now },
    });
    sent++;
  }
  return sent;
}

/**
 * Runs a pass every `intervalMs` (one at a time); `stop()` waits for the pass under way. With `exclusive`, one replica
 * at a time: two passes that read the same reported total while a completion lands between them would report the
 * increase twice under two identifiers (the processor would count both).
 */
export function startMeterReporter(deps: MeterReporterDeps, intervalMs: number, exclusive?: ExclusiveWork): { stop(): Promise<void> } {
  let running: Promise<unknown> = Promise.resolve();
  const pass = async (): Promise<unknown> => (exclusive ? exclusive.tryExclusive('billing-meter-report', () => reportMeteredUsage(deps)) : reportMeteredUsage(deps));
  const timer = setInterval(() => {
    running = running.then(pass).catch((error: unknown) => deps.log.error({ err: error }, 'metered usage pass failed'));
  }, intervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
