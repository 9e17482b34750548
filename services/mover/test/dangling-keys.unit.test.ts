import { describe, expect, it } from 'vitest';
import { danglingKeysNote, isAskedFor } from '../src/jobs/dangling-keys.ts';

describe('which tables a table-level restore asked for', () => {
  it('matches a bare name in any schema, a qualified one in its schema only, and pg_dump globs', () => {
    expect(isAskedFor(['documents'], 'public', 'documents')).toBe(true);
    expect(isAskedFor(['documents'], 'archive', 'documents')).toBe(true);
    expect(isAskedFor(['public.documents'], 'archive', 'documents')).toBe(false);
    expect(isAskedFor(['billing.*'], 'billing', 'invoices')).toBe(true);
    expect(isAskedFor(['billing.*'], 'public', 'customers')).toBe(false);
    expect(isAskedFor(['doc?ments'], 'public', 'documents')).toBe(true);
    expect(isAskedFor(['public.cust'], 'public', 'customers')).toBe(false);
  });

  it('names each key left out in the restore message', () => {
    expect(danglingKeysNote([])).toBe('');
    expect(danglingKeysNote([{ constraint: 'documents_customer_id_fkey', table: 'public.documents', references: 'public.customers' }])).toBe(
      'left out a foreign key to tables not restored: documents_customer_id_fkey of public.documents (references public.customers)',
    );
  });
});
