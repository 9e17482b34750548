import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { NOT_IMPLEMENTED } from '@sigil/proto/unimplemented';
import { operationIndex, readHandlers, type OperationRow } from '../../scripts/operation-handlers.ts';

/**
 * Every operation of the two contracts has a handler in the service that owns it, except those NOT_IMPLEMENTED lists
 * (they answer 501 `not-implemented`). The handlers are read from the sources (`src/app.ts`): nothing is started.
 */
const rows = operationIndex();
const label = (row: OperationRow) => `${row.service}: ${row.operationId}`;

describe.each(['sigil', 'strata'] as const)('operations of the %s contract without a handler', (contract) => {
  const operations = rows.filter((row) => row.contract === contract);
  const listed = NOT_IMPLEMENTED[contract] as readonly string[];

  it('are all on the list: a new operation comes with its handler', () => {
    expect(operations.filter((row) => !row.handler && !listed.includes(row.operationId)).map(label)).toEqual([]);
  });

  it('are the whole list: an operation that got its handler is taken off it', () => {
    expect(operations.filter((row) => row.handler && listed.includes(row.operationId)).map(label)).toEqual([]);
  });

  it('lists operations of this contract, each once', () => {
    const ids = new Set(operations.map((row) => row.operationId));
    expect(listed.filter((operationId) => !ids.has(operationId))).toEqual([]);
    expect(listed.filter((operationId, index) => listed.indexOf(operationId) !== index)).toEqual([]);
  });
});

describe('reading the handlers from the sources', () => {
  it('finds handlers of every kind where they are bound, and none in a file that does not exist', () => {
    const signing = readHandlers('services/signing/src/app.ts');
    expect(signing.get('exchangeSigningToken')).toMatchObject({ file: 'services/signing/src/app.ts', line: expect.any(Number) });
    expect(signing.has('submitSigning')).toBe(true);
    expect(readHandlers('services/templates/src/app.ts').has('createTemplate')).toBe(true);
    expect(readHandlers('gateway/src/sigil-edge.ts').has('getOpenApiDocument')).toBe(true);
    expect(readHandlers('services/billing/src/app.ts').has('receiveProcessorWebhook')).toBe(true);
    expect(readHandlers('services/nobody/src/app.ts').size).toBe(0);
  });

  it('refuses handlers it cannot name (a spread, a computed name)', () => {
    const root = mkdtempSync(path.join(tmpdir(), 'handlers-'));
    mkdirSync(path.join(root, 'src'));
    writeFileSync(path.join(root, 'src/spread.ts'), 'createApp({ handlers: { getThing: async () => ok(), ...more } });\n');
    writeFileSync(path.join(root, 'src/computed.ts'), "createApp({\n  publicHandlers: { ['get' + 'Thing']: async () => ok() },\n});\n");
    expect(() => readHandlers('src/spread.ts', root)).toThrow('src/spread.ts:1: list each handler as `operationId: handler`');
    expect(() => readHandlers('src/computed.ts', root)).toThrow('src/computed.ts:2: list each handler');
  });

  it('keeps the operationIds of the two contracts apart (the gateway asks one list about both)', () => {
    const ids = rows.map((row) => row.operationId);
    expect(ids.filter((operationId, index) => ids.indexOf(operationId) !== index)).toEqual([]);
  });
});
