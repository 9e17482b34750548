import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshTestDatabase, strataPrincipal } from '@sigil/kit/testing';
import { catalogVersion, createDb, type Db } from '../src/db.ts';
import type { ConsoleEvent } from '../src/console/events.ts';
import { createPinService } from '../src/backups/pins.ts';
import { migrationsDir } from './helpers.ts';

let db: Db;
beforeAll(async () => {
  db = createDb(await freshTestDatabase('strata_catalog_test_pins', migrationsDir));
});
afterAll(async () => db?.$disconnect());

async function aBackup(id: string) {
  return db.backup.create({ data: { id, namespace: 'default', name: `orders-${id}`, targetName: 'orders', store: 'local', policy: 'nightly', engine: 'postgres', phase: 'Succeeded', queuedAt: new Date('2026-11-01T03:00:00Z') } });
}

describe('pinning a backup', () => {
  it('bumps the catalog version, tells listeners and kicks the scheduler, for pin and unpin alike', async () => {
    const events: ConsoleEvent[] = [];
    let kicks = 0;
    const pins = createPinService({ db, notify: (e) => events.push(e), kick: () => void (kicks += 1), clock: () => new Date('2026-11-24T00:00:00Z') });
    await aBackup('bk1');
    const before = await catalogVersion(db);

    const pinned = await pins.pin(strataPrincipal('operator'), 'bk1', { expires: '30d', reason: 'audit' });
    expect(pinned).toEqual({ message: 'Backup bk1 pinned until 2026-12-24T00:00:00.000Z.', kind: 'Backup', namespace: 'default', name: 'orders-bk1', link: '/backups/bk1' });
    const afterPin = await catalogVersion(db);
    expect(afterPin).toBe(before + 1n);
    expect(events).toEqual([expect.objectContaining({ kind: 'backup', name: 'orders-bk1', stage: 'pinned', version: Number(afterPin) })]);
    expect(kicks).toBe(1);
    expect(await db.backup.findUniqueOrThrow({ where: { id: 'bk1' } })).toMatchObject({ pinned: true, pinReason: 'audit', pinnedBy: 'operator@example.test' });

    await pins.unpin('bk1');
    expect(await catalogVersion(db)).toBe(afterPin + 1n);
    expect(events.at(-1)).toMatchObject({ stage: 'unpinned', version: Number(afterPin + 1n) });
    expect(kicks).toBe(2);
    expect(await db.backup.findUniqueOrThrow({ where: { id: 'bk1' } })).toMatchObject({ pinned: false, pinReason: null, pinExpires: null });
  });

  it('changes nothing for an unknown backup or a bad expiry', async () => {
    const events: ConsoleEvent[] = [];
    const pins = createPinService({ db, notify: (e) => events.push(e), kick: () => undefined, clock: () => new Date() });
    await aBackup('bk2');
    const before = await catalogVersion(db);
    await expect(pins.pin(strataPrincipal('operator'), 'nope', {})).rejects.toMatchObject({ code: 'not-found' });
    await expect(pins.pin(strataPrincipal('operator'), 'bk2', { expires: 'soon' })).rejects.toMatchObject({ code: 'validation-failed' });
    expect(await catalogVersion(db)).toBe(before);
    expect(events).toEqual([]);
  });
});
