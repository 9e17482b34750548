import { describe, expect, it } from 'vitest';
import { isAbortedTransaction, retryAborted } from '../src/db/deadlock-retry.ts';

/** A transaction aborted as a deadlock victim, as Prisma reports it through the pg driver adapter. */
const deadlock = () =>
  Object.assign(new Error('Transaction failed due to a write conflict or a deadlock. Please retry your transaction'), {
    code: 'P2034',
    meta: { driverAdapterError: { name: 'DriverAdapterError', cause: { originalCode: '40P01', originalMessage: 'deadlock detected', kind: 'TransactionWriteConflict' } } },
  });

describe('a transaction Postgres aborted', () => {
  it('is recognised as Prisma, its driver adapter and pg report it', () => {
    expect(isAbortedTransaction(deadlock())).toBe(true);
    expect(isAbortedTransaction(Object.assign(new Error('could not serialize access'), { code: '40001' }))).toBe(true);
    expect(isAbortedTransaction({ code: 'P2010', meta: { driverAdapterError: { cause: { originalCode: '40P01' } } } })).toBe(true);
    expect(isAbortedTransaction(Object.assign(new Error('duplicate key'), { code: '23505' }))).toBe(false);
    expect(isAbortedTransaction(new TypeError('x is undefined'))).toBe(false);
  });

  it('is run again, at most three times in all; any other error is thrown at once', async () => {
    let runs = 0;
    await expect(retryAborted(async () => (++runs < 3 ? Promise.reject(deadlock()) : 'queued'))).resolves.toBe('queued');
    expect(runs).toBe(3);

    runs = 0;
    await expect(retryAborted(async () => { runs++; throw deadlock(); })).rejects.toMatchObject({ code: 'P2034' });
    expect(runs).toBe(3);

    runs = 0;
    await expect(retryAborted(async () => { runs++; throw new TypeError('x is undefined'); })).rejects.toThrow('x is undefined');
    expect(runs).toBe(1);
  });
});
