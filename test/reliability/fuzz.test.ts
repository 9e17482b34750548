import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSigilOpenApi, type OpenApiDocument } from '@sigil/proto';
import { loadStrataOpenApi } from '@sigil/proto/strata-openapi';
import { startTestStack, type TestStack } from '../e2e/stack.ts';
import { createContractValidator } from '../contract/validator.ts';
import { createFuzzClient } from './fuzz-client.ts';
import { listOperationSpecs, type OperationSpec } from './fuzz-requests.ts';
import { fuzzProduct, summaryOf, type ProductReport } from './fuzz-runner.ts';
import { seedFuzzWorld, type FuzzWorld } from './fuzz-world.ts';
import { quick } from './mode.ts';

/**
 * Contract fuzzing (issue 32, point 1): every operation of sigil.v1 and strata.v1 gets requests generated from its
 * schemas, valid and hostile, through the gateway of one stack with a credential that may call it; every answer must
 * be documented for that operation (status, media type, body schema) and none may be a 5xx. A failure is shrunk by
 * fast-check and printed as a curl line. `FUZZ_SEED=<n>` replays a run.
 */
const RUNS = quick(200, 2_000);
const CONCURRENCY = 8;
// The quick mode (CI's gate) replays one fixed seed, so a red run is a regression and not a new draw; the long mode
// draws a new seed each night to find new cases.
const SEED = Number(process.env.FUZZ_SEED ?? quick(20_261_129, Date.now() % 2 ** 31));

let stack: TestStack;
let world: FuzzWorld;
let client: ReturnType<typeof createFuzzClient>;

beforeAll(async () => {
  // Smaller generated arrays, maps and strings in the quick mode (generating is CPU the stack also needs); the edge
  // cases (huge strings, odd Unicode, hostile segments) are constants and stay. Reset after: workers are shared.
  fc.configureGlobal({ baseSize: quick('xsmall', 'small') });
  stack = await startTestStack();
  world = await seedFuzzWorld(stack);
  client = createFuzzClient(stack.gatewayUrl, CONCURRENCY);
}, 240_000);
afterAll(async () => {
  fc.resetConfigureGlobal();
  await client?.close();
  await stack?.stop();
}, 60_000);

function expectWithinContract(report: ProductReport): void {
  console.log(summaryOf(report));
  const short = report.perOperation.filter((o) => o.requests < RUNS && !report.failures.some((f) => f.includes(` ${o.operationId} `)));
  expect(report.failures, `seed ${SEED}\n${report.failures.join('\n\n')}`).toEqual([]);
  expect(short, 'operations cut short by the time limit').toEqual([]);
  expect(report.serverErrors).toBe(0);
}

/** Fuzzes every operation of one contract through the stack's gateway and checks every answer against it. */
async function fuzzContract(product: 'sigil' | 'strata', doc: OpenApiDocument, prefix: string): Promise<void> {
  const validator = createContractValidator(doc, prefix ? { prefix } : {});
  const asRecord = doc as unknown as Record<string, unknown>;
  const report = await fuzzProduct({
    product: `${product}.v1`,
    gatewayUrl: stack.gatewayUrl,
    doc: asRecord,
    specs: listOperationSpecs(asRecord, product, prefix),
    context: (spec) => world[product](spec),
    send: client.send,
    check: (spec: OperationSpec, request, answer) => validator.check(request.method, request.url, answer.status, answer.headers, answer.body, spec.operationId),
    runsPerOperation: RUNS,
    concurrency: CONCURRENCY,
    seed: SEED,
    secrets: world.secrets,
    timeLimitMs: quick(180_000, 1_800_000),
  });
  expectWithinContract(report);
}

describe(`contract fuzzing (${RUNS} requests per operation, seed ${SEED})`, () => {
  it('sigil.v1: no 5xx and no answer outside the contract', () => fuzzContract('sigil', loadSigilOpenApi(), ''), quick(1_200_000, 10_800_000));

  it('strata.v1: no 5xx and no answer outside the contract', () => fuzzContract('strata', loadStrataOpenApi() as unknown as OpenApiDocument, '/api/v1'), quick(1_200_000, 10_800_000));
});
