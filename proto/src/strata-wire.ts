import { readFileSync } from 'node:fs';
import { createAjv, formatErrors, type JsonSchemaValidateFunction } from './ajv.ts';
import { STRATA_JOB_TYPES, STRATA_REPORT_TYPES, type ProgressReport, type SealedJob, type StrataJobs, type StrataReport, type StrataReports } from './strata-jobs.ts';

/**
 * Validation of what crosses the wire between the backup catalog and the mover, against `proto/jobs/*.schema.json`:
 * a job before it is sealed and after it is opened, a report before it is published and when it is consumed.
 * Kept apart from `./strata-jobs.ts` so that naming a subject does not load Ajv.
 */

const jobsDir = new URL('../jobs/', import.meta.url);
const readSchema = (name: string): object => JSON.parse(readFileSync(new URL(`${name}.schema.json`, jobsDir), 'utf8')) as object;

interface Validators {
  sealed: JsonSchemaValidateFunction;
  jobs: Map<keyof StrataJobs, JsonSchemaValidateFunction>;
  envelope: JsonSchemaValidateFunction;
  reports: Map<keyof StrataReports, JsonSchemaValidateFunction>;
  progress: JsonSchemaValidateFunction;
}

let validators: Validators | undefined;

function compiled(): Validators {
  if (!validators) {
    const ajv = createAjv();
    ajv.addSchema(readSchema('common'));
    validators = {
      sealed: ajv.compile(readSchema('sealed-job')),
      jobs: new Map(STRATA_JOB_TYPES.map((type) => [type, ajv.compile(readSchema(type))])),
      envelope: ajv.compile(readSchema('report')),
      reports: new Map(STRATA_REPORT_TYPES.map((type) => [type, ajv.compile(readSchema(type))])),
      progress: ajv.compile(readSchema('progress')),
    };
  }
  return validators;
}

export class StrataWireError extends Error {
  readonly errors: string[];
  constructor(what: string, errors: string[]) {
    super(`${what} does not match its schema: ${errors.join('; ')}`);
    this.name = 'StrataWireError';
    this.errors = errors;
  }
}

function check(validate: JsonSchemaValidateFunction, value: unknown, what: string, prefix = ''): void {
  if (!validate(value)) throw new StrataWireError(what, formatErrors(validate.errors, prefix));
}

/** A sealed job as received (the envelope only: its box is opened by the mover); throws a StrataWireError otherwise. */
export function decodeSealedJob(payload: unknown): SealedJob {
  check(compiled().sealed, payload, 'a sealed job');
  return payload as SealedJob;
}

/** Throws a StrataWireError unless `job` is a valid job of `type` (the catalog before sealing, the mover after opening). */
export function assertStrataJob<T extends keyof StrataJobs>(type: T, job: unknown): asserts job is StrataJobs[T] {
  const validate = compiled().jobs.get(type);
  if (!validate) throw new StrataWireError(`job type ${JSON.stringify(type)}`, ['unknown job type']);
  check(validate, job, `a ${type} job`);
}

/** A report as received (envelope and data checked); throws a StrataWireError otherwise. */
export function decodeStrataReport(payload: unknown): StrataReport {
  const { envelope, reports } = compiled();
  check(envelope, payload, 'a Strata report');
  const report = payload as StrataReport;
  check(reports.get(report.type) as JsonSchemaValidateFunction, report.data, `a ${report.type} report`, '/data');
  return report;
}

/** Throws a StrataWireError unless `data` is valid data of a `type` report (a report kept in the store, say). */
export function assertStrataReportData<K extends keyof StrataReports>(type: K, data: unknown): asserts data is StrataReports[K] {
  check(compiled().reports.get(type) as JsonSchemaValidateFunction, data, `a ${type} report`);
}

/** Throws a StrataWireError unless `report` is a valid report (the mover before publishing). */
export function assertStrataReport(report: StrataReport): void {
  decodeStrataReport(report);
}

/** Throws a StrataWireError unless `report` is a valid progress report. */
export function assertProgressReport(report: unknown): asserts report is ProgressReport {
  check(compiled().progress, report, 'a progress report');
}
