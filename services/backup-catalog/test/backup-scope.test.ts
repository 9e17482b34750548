// Who sees which backups, activity and audit events through REST: a caller scoped to orgs or projects reads the
// backups of the targets labelled with one of them (GET /backups/{id}, its inventory, its diff, pin and unpin), and only their
// runs, restores and audit events in /activity and /audit. Anything else is answered as an unknown backup, or left out.
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { strataPrincipal } from '@sigil/kit/testing';
import type { StrataPrincipal } from '@sigil/proto/strata';
import type { CatalogHarness } from './helpers.ts';
import { LEDGER, LEDGER_FULL, MAIN, MAIN_OLDER, requestRestore, restAs, startRestoreCatalog } from './restore-fixtures.ts';

const ACME = strataPrincipal('operator', { orgs: ['acme'] });
const GLOBEX = strataPrincipal('operator', { orgs: ['globex'] });
const EVERYONE = strataPrincipal('operator');

let h: CatalogHarness;

beforeAll(async () => {
  h = await startRestoreCatalog('backup_scope');
  // One audited write on each target.
  await requestRestore(h, 'restorer', { target: `${MAIN.namespace}/${MAIN.name}`, mode: 'download', backupID: MAIN_OLDER.id });
  await requestRestore(h, 'restorer', { target: `${LEDGER.namespace}/${LEDGER.name}`, mode: 'download', backupID: LEDGER_FULL.id });
});
afterAll(async () => h?.close());

const unknown = (id: string) => ({ error: `Backup ${id} was not found.` });

async function post(principal: StrataPrincipal, url: string, body: object = {}) {
  return request(h.app).post(url).set(await h.auth.headers(principal)).send(body);
}

describe('backups, scoped like every target read', () => {
  it('reads a backup of a visible target, and answers one of another as an unknown backup', async () => {
    expect((await restAs(h, ACME, `/api/v1/backups/${MAIN_OLDER.id}`)).status).toBe(200);
    const hidden = await restAs(h, ACME, `/api/v1/backups/${LEDGER_FULL.id}`);
    expect([hidden.status, hidden.body]).toEqual([404, unknown(LEDGER_FULL.id)]);
    expect((await restAs(h, GLOBEX, `/api/v1/backups/${LEDGER_FULL.id}`)).status).toBe(200);
    expect((await restAs(h, EVERYONE, `/api/v1/backups/${LEDGER_FULL.id}`)).status).toBe(200);
  });

  it("answers an invisible backup's inventory as an unknown backup, before looking for it", async () => {
    const hidden = await restAs(h, ACME, `/api/v1/backups/${LEDGER_FULL.id}/inventory`);
    expect([hidden.status, hidden.body]).toEqual([404, unknown(LEDGER_FULL.id)]);
    // A visible one goes on to the store: this fixture's backup has no inventory object.
    expect((await restAs(h, GLOBEX, `/api/v1/backups/${LEDGER_FULL.id}/inventory`)).body).toEqual({ error: `Backup ${LEDGER_FULL.id} has no inventory.` });
  });

  it('answers a diff with an invisible backup as an unknown backup, before comparing the two targets', async () => {
    const url = `/api/v1/backups/${MAIN_OLDER.id}/diff/${LEDGER_FULL.id}`;
    const acme = await restAs(h, ACME, url);
    expect([acme.status, acme.body]).toEqual([404, unknown(LEDGER_FULL.id)]);
    const globex = await restAs(h, GLOBEX, url);
    expect([globex.status, globex.body]).toEqual([404, unknown(MAIN_OLDER.id)]);
    const everyone = await restAs(h, EVERYONE, url);
    expect(everyone.status).toBe(400);
    expect(everyone.body.error).toMatch(new RegExp(`^Backups ${MAIN_OLDER.id} \\(.+\\) and ${LEDGER_FULL.id} \\(.+\\) are of different targets`));
  });

  it('refuses to pin or unpin a backup the caller may not see, and changes nothing', async () => {
    const pin = await post(ACME, `/api/v1/backups/${LEDGER_FULL.id}/pin`, { reason: 'not mine' });
    expect([pin.status, pin.body]).toEqual([404, unknown(LEDGER_FULL.id)]);
    expect(await h.runtime.db.backup.findUniqueOrThrow({ where: { id: LEDGER_FULL.id } })).toMatchObject({ pinned: false });
    const pinned = await post(GLOBEX, `/api/v1/backups/${LEDGER_FULL.id}/pin`, { reason: 'audit' });
    expect(pinned.status, JSON.stringify(pinned.body)).toBe(200);
    const unpin = await post(ACME, `/api/v1/backups/${LEDGER_FULL.id}/unpin`);
    expect(unpin.status).toBe(404);
    expect(await h.runtime.db.backup.findUniqueOrThrow({ where: { id: LEDGER_FULL.id } })).toMatchObject({ pinned: true });
    expect((await post(GLOBEX, `/api/v1/backups/${LEDGER_FULL.id}/unpin`)).status).toBe(200);
  });

  it('lists in /activity the runs and restores of visible targets only', async () => {
    const targetsIn = async (principal: StrataPrincipal) => {
      const res = await restAs(h, principal, '/api/v1/activity');
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const body = res.body as { backups: Array<{ target: string }>; restores: Array<{ target: string }> };
      return { backups: [...new Set(body.backups.map((b) => b.target))].sort(), restores: [...new Set(body.restores.map((r) => r.target))].sort() };
    };
    expect(await targetsIn(ACME)).toEqual({ backups: [MAIN.name], restores: [`${MAIN.namespace}/${MAIN.name}`] });
    expect(await targetsIn(GLOBEX)).toEqual({ backups: [LEDGER.name], restores: [`${LEDGER.namespace}/${LEDGER.name}`] });
    expect(await targetsIn(EVERYONE)).toEqual({ backups: [LEDGER.name, MAIN.name], restores: [`${LEDGER.namespace}/${LEDGER.name}`, `${MAIN.namespace}/${MAIN.name}`] });
  });

  it('lists in /audit what was done to visible targets only; an unscoped caller sees every event', async () => {
    const targetsIn = async (principal: StrataPrincipal) => {
      const res = await restAs(h, principal, '/api/v1/audit?action=createRestore');
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return [...new Set((res.body.events as Array<{ target: string }>).map((e) => e.target))].sort();
    };
    expect(await targetsIn(ACME)).toEqual([`${MAIN.namespace}/${MAIN.name}`]);
    expect(await targetsIn(GLOBEX)).toEqual([`${LEDGER.namespace}/${LEDGER.name}`]);
    expect(await targetsIn(EVERYONE)).toEqual([`${LEDGER.namespace}/${LEDGER.name}`, `${MAIN.namespace}/${MAIN.name}`]);
  });
});
