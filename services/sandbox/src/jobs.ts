import { consumerName, type Bus, type RunningConsumer } from '@sigil/kit/bus';
import { unseal } from '@sigil/kit/crypto';
import type { Logger } from '@sigil/kit/log';
import { STRATA_JOBS_STREAM, strataJobSubject, type StrataJobs } from '@sigil/proto/strata-jobs';
import { assertStrataJob, decodeSealedJob } from '@sigil/proto/strata-wire';
import type { SandboxService } from './sandboxes.ts';

/** `sandbox.create` jobs from the catalog (a restore in mode sandbox through `POST /restores`). */
export async function startSandboxJobConsumer(deps: { bus: Bus; log: Logger; secretsKey: Buffer; cell: string; sandboxes: SandboxService }): Promise<RunningConsumer> {
  return await deps.bus.consume<StrataJobs['sandbox.create']>({
    stream: STRATA_JOBS_STREAM,
    durable: consumerName(deps.cell, 'sandbox-create'),
    subjects: [strataJobSubject('sandbox.create', deps.cell)],
    log: deps.log,
    decode: (payload) => {
      const sealed = decodeSealedJob(payload);
      const job: unknown = JSON.parse(unseal(deps.secretsKey, sealed.sealed, sealed.type));
      assertStrataJob('sandbox.create', job);
      return job;
    },
    handle: async (message) => {
      await deps.sandboxes.fromJob(message.data);
    },
  });
}
