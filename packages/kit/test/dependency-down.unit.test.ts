import { describe, expect, it } from 'vitest';
import { unexpectedAnswer } from '../src/auth/service-caller.ts';
import { AppError } from '../src/errors.ts';
import { isDependencyUnavailable } from '../src/http/dependency-down.ts';
import { toAppError } from '../src/http/problem.ts';
import { silentLogger } from '../src/testing.ts';

describe('a dependency that cannot be reached', () => {
  it('is recognised as Prisma, its driver adapter and pg report it, also as a cause', () => {
    expect(isDependencyUnavailable(Object.assign(new Error("Can't reach database server at 127.0.0.1:5432"), { code: 'P1001' }))).toBe(true);
    expect(isDependencyUnavailable(Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }))).toBe(true);
    expect(isDependencyUnavailable(new Error('wrapped', { cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }) }))).toBe(true);
    expect(isDependencyUnavailable(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isDependencyUnavailable(Object.assign(new Error('Transaction API error: Unable to start a transaction in the given time.'), { code: 'P2028' }))).toBe(true);
    // A query cut off by a Postgres restart, as Prisma reports it through the pg driver adapter.
    const adapterError = (originalCode: string, message: string) =>
      Object.assign(new Error(`Invalid \`prisma.envelope.create()\` invocation: Database error. Code: \`${originalCode}\`. Message: \`${message}\``), {
        code: 'P2039',
        meta: { modelName: 'Envelope', driverAdapterError: { name: 'DriverAdapterError', cause: { originalCode, originalMessage: message, kind: 'postgres' } } },
      });
    expect(isDependencyUnavailable(adapterError('57P01', 'terminating connection due to administrator command'))).toBe(true);
    expect(isDependencyUnavailable(adapterError('22P05', 'unsupported Unicode escape sequence'))).toBe(false);
    expect(isDependencyUnavailable({ code: 'P2010', meta: { driverAdapterError: { name: 'DriverAdapterError', cause: { kind: 'ConnectionClosed' } } } })).toBe(true);
    expect(isDependencyUnavailable(Object.assign(new Error('duplicate key'), { code: '23505' }))).toBe(false);
    expect(isDependencyUnavailable(Object.assign(new Error('Unique constraint failed'), { code: 'P2002' }))).toBe(false);
    expect(isDependencyUnavailable(new TypeError('x is undefined'))).toBe(false);
  });

  it('is recognised in a call to another service that got no answer, timed out or was told the service is unavailable', async () => {
    expect(isDependencyUnavailable(new AppError('service-unavailable', 'The templates service did not answer; try again.'))).toBe(true);
    expect(isDependencyUnavailable(new DOMException('The operation was aborted due to timeout', 'TimeoutError'))).toBe(true);
    expect(isDependencyUnavailable(new TypeError('fetch failed', { cause: Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }) }))).toBe(true);
    const unavailable = await unexpectedAnswer('templates', new Response('{"title":"Service Unavailable"}', { status: 503 }), 'a version');
    expect(unavailable.code).toBe('service-unavailable');
    expect(unavailable.message).toBe('The templates service is unavailable (it answered 503 for a version); try again.');
    expect(isDependencyUnavailable(unavailable)).toBe(true);
    const broken = await unexpectedAnswer('templates', new Response('oops', { status: 500 }));
    expect(broken.code).toBe('bad-gateway');
    expect(isDependencyUnavailable(broken)).toBe(false);
    expect(isDependencyUnavailable(new AppError('not-found', 'No such template.'))).toBe(false);
  });

  it('answers 503 with Retry-After instead of 500', () => {
    const req = { headers: { 'x-request-id': 'req_1' }, path: '/v1/templates' } as never;
    const down = toAppError(Object.assign(new Error('the database system is shutting down'), { code: '57P03' }), req, silentLogger());
    expect(down.status).toBe(503);
    expect(down.code).toBe('service-unavailable');
    expect(down.headers['Retry-After']).toBe('5');
    expect(toAppError(new TypeError('x is undefined'), req, silentLogger()).status).toBe(500);
  });
});
