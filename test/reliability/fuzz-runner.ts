import fc from 'fast-check';
import { curlOf, type Answer } from './fuzz-client.ts';
import { requestArbitrary, type FuzzRequest, type OperationSpec, type RequestContext } from './fuzz-requests.ts';

/** What one product's run found. */
export interface ProductReport {
  product: string;
  operations: number;
  requests: number;
  byClass: Record<'2xx' | '3xx' | '4xx' | '5xx' | 'no answer', number>;
  /** Answers outside the contract (5xx included when undocumented), counted over every request sent, shrinking too. */
  violations: number;
  serverErrors: number;
  /** One entry per failing operation: its shrunk request as a curl line and what was wrong. */
  failures: string[];
  perOperation: Array<{ operationId: string; requests: number; ms: number }>;
  ms: number;
}

export interface FuzzProductOptions {
  product: string;
  gatewayUrl: string;
  doc: Record<string, unknown>;
  specs: OperationSpec[];
  context: (spec: OperationSpec) => RequestContext;
  send: (request: FuzzRequest) => Promise<Answer>;
  /** The contract check of one answer: its problems, none when it is within the contract. */
  check: (spec: OperationSpec, request: FuzzRequest, answer: Answer) => string[];
  runsPerOperation: number;
  /** Operations fuzzed at once (each one's requests go one after the other, so fast-check can shrink). */
  concurrency: number;
  seed: number;
  secrets: Record<string, string>;
  /** Per operation, for the whole check including shrinking. */
  timeLimitMs: number;
}

/**
 * Fuzzes every operation of a product: per operation, a fast-check property over generated requests whose answers must
 * be within the contract and never 5xx; a failure is shrunk and reported as a curl line. Operations run `concurrency`
 * at a time.
 */
export async function fuzzProduct(options: FuzzProductOptions): Promise<ProductReport> {
  const started = Date.now();
  const report: ProductReport = { product: options.product, operations: options.specs.length, requests: 0, byClass: { '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0, 'no answer': 0 }, violations: 0, serverErrors: 0, failures: [], perOperation: [], ms: 0 };
  const queue = [...options.specs];
  const worker = async () => {
    for (let spec = queue.shift(); spec; spec = queue.shift()) await fuzzOperation(spec, options, report);
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  report.ms = Date.now() - started;
  return report;
}

async function fuzzOperation(spec: OperationSpec, options: FuzzProductOptions, report: ProductReport): Promise<void> {
  const started = Date.now();
  let requests = 0;
  const arbitrary = requestArbitrary(spec, options.doc, options.context(spec));
  const property = fc.asyncProperty(arbitrary, async (request) => {
    requests++;
    report.requests++;
    let answer: Answer;
    try {
      answer = await options.send(request);
    } catch (error) {
      report.byClass['no answer']++;
      report.violations++;
      throw new Error(`no answer: ${(error as Error).message}`, { cause: error });
    }
    const klass = `${String(answer.status)[0]}xx` as keyof ProductReport['byClass'];
    if (klass in report.byClass) report.byClass[klass]++;
    const problems = options.check(spec, request, answer);
    if (answer.status >= 500) {
      report.serverErrors++;
      problems.unshift(`answered ${answer.status}`);
    }
    if (problems.length) {
      report.violations++;
      throw new Error(`${problems.join('; ')}\n    answer: ${answer.status} ${abbreviate(answer.body)}`);
    }
  });
  const details = await fc.check(property, {
    numRuns: options.runsPerOperation,
    seed: options.seed,
    plugins: [fc.interruptAfterTimeLimit(options.timeLimitMs, { failOnInterrupt: false })],
  } as fc.Parameters<[FuzzRequest]>);
  if (details.failed && details.counterexample) {
    const [request] = details.counterexample;
    const message = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
    report.failures.push(
      `${options.product} ${spec.operationId} (seed ${details.seed}, after ${details.numRuns} runs and ${details.numShrinks} shrinks):\n    ${curlOf(options.gatewayUrl, request, options.secrets)}\n    ${message}`,
    );
  }
  report.perOperation.push({ operationId: spec.operationId, requests, ms: Date.now() - started });
}

function abbreviate(body: unknown): string {
  const text = typeof body === 'string' ? body : JSON.stringify(body) ?? '';
  return text.length > 400 ? `${text.slice(0, 400)}…` : text;
}

/** The summary lines a run prints. */
export function summaryOf(report: ProductReport): string {
  const per = report.perOperation.map((o) => o.requests);
  const slowest = [...report.perOperation].sort((a, b) => b.ms - a.ms).slice(0, 3).map((o) => `${o.operationId} ${(o.ms / 1000).toFixed(1)} s`);
  const classes = Object.entries(report.byClass).map(([k, v]) => `${k} ${v}`).join(', ');
  return [
    `fuzz ${report.product}: ${report.operations} operations, ${report.requests} requests (${Math.min(...per)}–${Math.max(...per)} per operation) in ${(report.ms / 1000).toFixed(1)} s`,
    `  answers: ${classes}; 5xx: ${report.serverErrors}; outside the contract: ${report.violations}; failing operations: ${report.failures.length}`,
    `  slowest: ${slowest.join(', ')}`,
  ].join('\n');
}
