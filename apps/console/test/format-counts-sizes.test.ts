import { describe, expect, it } from 'vitest';
import { bytes, count, quantity, quantityBytes } from '../src/format.ts';
import { limitShare, sizeUsed } from '../src/pages/sandboxes/size.ts';

describe('counts', () => {
  it('say the noun in the singular for exactly one, in the plural otherwise', () => {
    expect(count(1, 'backup')).toBe('1 backup');
    expect(count(0, 'backup')).toBe('0 backups');
    expect(count(2, 'backup')).toBe('2 backups');
    expect(count(1, 'syntax error')).toBe('1 syntax error');
    expect(count(3, 'entry', 'entries')).toBe('3 entries');
    expect(count(1234, 'row')).toBe(`${(1234).toLocaleString()} rows`);
  });
});

describe('Kubernetes quantities', () => {
  it('read binary and decimal suffixes, exponents and plain bytes', () => {
    expect(quantityBytes('1Gi')).toBe(2 ** 30);
    expect(quantityBytes('1664672Ki')).toBe(1664672 * 1024);
    expect(quantityBytes('1536Mi')).toBe(1536 * 2 ** 20);
    expect(quantityBytes('500M')).toBe(500e6);
    expect(quantityBytes('2k')).toBe(2000);
    expect(quantityBytes('1e9')).toBe(1e9);
    expect(quantityBytes('1E')).toBe(1e18);
    expect(quantityBytes('1.5Gi')).toBe(1.5 * 2 ** 30);
    expect(quantityBytes(' 1000 ')).toBe(1000);
  });

  it('refuse what is not a quantity', () => {
    for (const text of ['', 'Gi', '1 GB', '1gi', '1Gib', 'ten']) expect(quantityBytes(text), text).toBeUndefined();
  });

  it('are shown as sizes people read, or as written when they are not quantities', () => {
    expect(quantity('1664672Ki')).toBe(bytes(1664672 * 1024));
    expect(quantity('1664672Ki')).toBe('1.7 GB');
    expect(quantity('1Gi')).toBe('1.1 GB');
    expect(quantity('unlimited')).toBe('unlimited');
  });
});

describe('a sandbox’s size against its limit', () => {
  it('shows the limit as a size with the share used, never the raw quantity', () => {
    expect(limitShare(42_600_000, '1664672Ki')).toBe('of 1.7 GB (2%)');
    expect(sizeUsed(42_600_000, '1664672Ki')).toBe('42.6 MB of 1.7 GB (2%)');
    expect(limitShare(1000, '')).toBe('no size limit');
    expect(sizeUsed(1000, '')).toBe('1.0 KB, no size limit');
    expect(limitShare(1000, 'odd')).toBe('of odd');
  });
});
