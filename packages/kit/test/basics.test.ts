import { describe, expect, it } from 'vitest';
import { z } from 'zod/v3';
import { AppError, toProblem } from '../src/errors.ts';
import { normalizeRequestId } from '../src/http/request-id.ts';
import { decodeCursor, encodeCursor, toPage } from '../src/pagination.ts';
import { loadConfig } from '../src/config.ts';
import { newId } from '../src/ids.ts';
import { toFieldError } from '../src/api/validation.ts';

describe('problem+json', () => {
  it('renders the RFC 9457 members, field pointers and extensions', () => {
    const error = new AppError('payment-required', 'Add a card.', { extensions: { upgradeUrl: 'https://x/upgrade' }, errors: [{ pointer: '/body/a', detail: 'bad' }] });
    expect(toProblem(error, 'req_1')).toEqual({
      type: 'https://sigil.dev/problems/payment-required',
      title: 'Payment required',
      status: 402,
      detail: 'Add a card.',
      requestId: 'req_1',
      errors: [{ pointer: '/body/a', detail: 'bad' }],
      upgradeUrl: 'https://x/upgrade',
    });
  });

  it('maps validator paths to request-rooted JSON Pointers', () => {
    const base = { message: 'must be x' };
    expect(toFieldError({ ...base, keyword: 'type', instancePath: '/requestBody/name', params: {} })).toEqual({ pointer: '/body/name', detail: 'must be x' });
    expect(toFieldError({ ...base, keyword: 'required', instancePath: '/requestBody', params: { missingProperty: 'name' } }).pointer).toBe('/body/name');
    expect(toFieldError({ ...base, keyword: 'additionalProperties', instancePath: '/requestBody', params: { additionalProperty: 'a/b' } }).pointer).toBe('/body/a~1b');
    expect(toFieldError({ ...base, keyword: 'maximum', instancePath: '/query/limit', params: {} }).pointer).toBe('/query/limit');
    expect(toFieldError({ ...base, keyword: 'maxLength', instancePath: '/headers/idempotency-key', params: {} }).pointer).toBe('/header/idempotency-key');
  });
});

describe('request ids', () => {
  it('keeps 8 to 128 characters of A-Z a-z 0-9 . _ -', () => {
    expect(normalizeRequestId('abcdefgh')).toBe('abcdefgh');
    expect(normalizeRequestId('a'.repeat(128))).toBe('a'.repeat(128));
    expect(normalizeRequestId('A.b_c-9.Z')).toBe('A.b_c-9.Z');
  });
  it.each([undefined, '', 'abcdefg', 'a'.repeat(129), 'abc def gh', 'abcdefgh/', 'ünïcödé12'])('replaces %j', (value) => {
    expect(normalizeRequestId(value)).toMatch(/^req_[A-Za-z0-9]{24}$/);
  });
});

describe('cursors', () => {
  it('round-trip and reject tampering', () => {
    expect(decodeCursor(encodeCursor(['2026-01-01T00:00:00.000Z', 'tpl_x']), 2)).toEqual(['2026-01-01T00:00:00.000Z', 'tpl_x']);
    expect(() => decodeCursor('%%%', 2)).toThrow(AppError);
    expect(() => decodeCursor(encodeCursor(['only-one']), 2)).toThrow(AppError);
    expect(() => decodeCursor(Buffer.from('{"a":1}').toString('base64url'), 2)).toThrow(AppError);
  });
  it('pages limit + 1 rows', () => {
    const rows = [1, 2, 3];
    expect(toPage(rows, 2, (n) => n * 10, (n) => [n])).toEqual({ object: 'list', data: [10, 20], hasMore: true, nextCursor: encodeCursor([2]) });
    expect(toPage(rows, 3, (n) => n, (n) => [n])).toMatchObject({ hasMore: false, nextCursor: null });
  });
});

describe('config', () => {
  it('lists every invalid variable', () => {
    const schema = z.object({ PORT: z.coerce.number().int(), DATABASE_URL: z.string().url() });
    expect(() => loadConfig(schema, { PORT: 'x', DATABASE_URL: 'nope' })).toThrow(/PORT[\s\S]*DATABASE_URL/);
    expect(loadConfig(schema, { PORT: '8080', DATABASE_URL: 'postgres://h/db' })).toEqual({ PORT: 8080, DATABASE_URL: 'postgres://h/db' });
  });
});

describe('ids', () => {
  it('are prefixed base62 of 24 characters and unique', () => {
    const ids = new Set(Array.from({ length: 1000 }, () => newId('tpl')));
    expect(ids.size).toBe(1000);
    for (const id of ids) expect(id).toMatch(/^tpl_[A-Za-z0-9]{24}$/);
  });
});
