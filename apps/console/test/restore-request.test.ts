import { describe, expect, it } from 'vitest';
import { EMPTY_DESTINATION, restoreCallOf, shownFieldsOf, type DestinationChoice } from '../src/pages/restores/request.ts';

const destination = (d: Partial<DestinationChoice> & Pick<DestinationChoice, 'mode'>): DestinationChoice => ({ ...EMPTY_DESTINATION, ...d });
const call = (d: DestinationChoice, tables: readonly string[] | 'all' = 'all', reason = '') => restoreCallOf({ target: 'default/postgres', at: '2026-11-28T05:48:17Z', destination: d, tables, reason });

describe('the request the wizard sends', () => {
  it('opens a sandbox through the sandbox service, with only the sandbox’s options', () => {
    expect(call(destination({ mode: 'sandbox', ttl: ' 2h ', host: 'ignored', confirm: 'ignored' }))).toEqual({
      path: '/sandboxes',
      body: { target: 'default/postgres', at: '2026-11-28T05:48:17Z', mode: 'sandbox', ttl: '2h' },
    });
    expect(call(destination({ mode: 'sandbox', expose: true }), ['public.orders'], 'audit')).toEqual({
      path: '/sandboxes',
      body: { target: 'default/postgres', at: '2026-11-28T05:48:17Z', mode: 'sandbox', expose: true, tables: ['public.orders'], reason: 'audit' },
    });
  });

  it('restores into a new database through the catalog, the port a number, blanks left to the API', () => {
    expect(call(destination({ mode: 'new', host: 'db.internal', port: 5433, database: 'shop_copy', credentialsSecret: 'default/admin', ttl: '9h' })).body).toEqual({
      target: 'default/postgres', at: '2026-11-28T05:48:17Z', mode: 'new', host: 'db.internal', port: 5433, database: 'shop_copy', credentialsSecret: 'default/admin',
    });
    const blank = call(destination({ mode: 'new' }));
    expect(blank.path).toBe('/restores');
    expect(blank.body).toEqual({ target: 'default/postgres', at: '2026-11-28T05:48:17Z', mode: 'new' });
  });

  it('sends the in-place confirmation as typed, even empty, and the safety backup skip only when asked', () => {
    expect(call(destination({ mode: 'in-place', confirm: 'postgres', skipSafetyBackup: true })).body).toEqual({
      target: 'default/postgres', at: '2026-11-28T05:48:17Z', mode: 'in-place', confirm: 'postgres', skipSafetyBackup: true,
    });
    expect(call(destination({ mode: 'in-place' })).body).toEqual({ target: 'default/postgres', at: '2026-11-28T05:48:17Z', mode: 'in-place', confirm: '' });
  });

  it('downloads one database, never tables', () => {
    expect(call(destination({ mode: 'download', downloadDatabase: 'shop' }), ['public.orders']).body).toEqual({ target: 'default/postgres', at: '2026-11-28T05:48:17Z', mode: 'download', database: 'shop' });
  });

  it('shows beside a field only the refusals about the chosen mode’s fields', () => {
    expect(shownFieldsOf('sandbox', false)).toEqual(['target', 'at', 'ttl', 'expose', 'tables', 'reason']);
    expect(shownFieldsOf('download', false)).toEqual(['target', 'at', 'reason']);
    expect(shownFieldsOf('download', true)).toContain('database');
    expect(shownFieldsOf('in-place', false)).toContain('confirm');
  });
});
