// Who sees which restores: a caller scoped to orgs or projects sees the restores of the targets labelled with one of
// them, through GET /restores and GET /restores/{ns}/{name} as through the subgraph's strataRestores and strataRestore.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { strataPrincipal } from '@sigil/kit/testing';
import type { StrataPrincipal } from '@sigil/proto/strata';
import { graph } from './console-graph-fixtures.ts';
import type { CatalogHarness } from './helpers.ts';
import { LEDGER, LEDGER_FULL, MAIN, MAIN_OLDER, requestRestore, restAs, startRestoreCatalog } from './restore-fixtures.ts';

const VIEWER = strataPrincipal('viewer');
const ACME = strataPrincipal('viewer', { orgs: ['acme'] });
const GLOBEX = strataPrincipal('viewer', { orgs: ['globex'] });
const BOOKS = strataPrincipal('viewer', { projects: ['books'] });
const NOBODY = strataPrincipal('viewer', { orgs: ['initech'] });

let h: CatalogHarness;
let main = '';
let ledger = '';
/** A restore whose target was deleted since: the labels that said who may see it went with the target. */
const RETIRED = { namespace: 'default', name: 'retired-restore-1' };

beforeAll(async () => {
  h = await startRestoreCatalog('restore_scope');
  main = await requestRestore(h, 'restorer', { target: `${MAIN.namespace}/${MAIN.name}`, mode: 'download', backupID: MAIN_OLDER.id });
  // The newest restore is ledger's: a scoped list's limit must count only what its caller may see.
  ledger = await requestRestore(h, 'restorer', { target: `${LEDGER.namespace}/${LEDGER.name}`, mode: 'download', backupID: LEDGER_FULL.id });
  await h.runtime.db.restore.create({
    data: { id: 'rs-retired-1', ...RETIRED, targetNamespace: 'default', targetName: 'retired', backupId: 'bk-retired', mode: 'download', phase: 'Succeeded', message: 'ready' },
  });
});
afterAll(async () => h?.close());

async function restNames(principal: StrataPrincipal, query = ''): Promise<string[]> {
  const res = await restAs(h, principal, `/api/v1/restores${query}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return (res.body.restores as Array<{ name: string }>).map((restore) => restore.name);
}

async function graphNames(principal: StrataPrincipal, args = ''): Promise<string[]> {
  const body = await graph(h, principal, `{ strataRestores${args} { name } }`);
  expect(body.errors).toBeUndefined();
  return (body.data?.strataRestores as Array<{ name: string }>).map((restore) => restore.name);
}

/** Whether GET /restores/{ns}/{name} finds it (200, else 404) and strataRestore returns it (else null): always both. */
async function readable(principal: StrataPrincipal, namespace: string, name: string): Promise<boolean> {
  const rest = await restAs(h, principal, `/api/v1/restores/${namespace}/${name}`);
  expect([200, 404]).toContain(rest.status);
  const body = await graph(h, principal, `{ strataRestore(namespace: "${namespace}", name: "${name}") { name } }`);
  expect(body.errors).toBeUndefined();
  expect(body.data?.strataRestore !== null, `GraphQL and REST disagree on ${name}`).toBe(rest.status === 200);
  return rest.status === 200;
}

describe('restores, scoped like every target read', () => {
  it.each([
    ['unscoped', VIEWER, () => [ledger, main]],
    ['scoped to an org', ACME, () => [main]],
    ['scoped to another org', GLOBEX, () => [ledger]],
    ['scoped to a project', BOOKS, () => [ledger]],
    ['scoped to an org without targets', NOBODY, () => []],
  ] as const)('lists and reads what a caller %s may see, in REST and GraphQL alike', async (_who, principal, expected) => {
    expect(await restNames(principal)).toEqual(expected());
    expect(await graphNames(principal)).toEqual(expected());
    expect(await readable(principal, MAIN.namespace, main)).toBe(expected().includes(main));
    expect(await readable(principal, LEDGER.namespace, ledger)).toBe(expected().includes(ledger));
  });

  it("counts in a list's limit only what the caller may see", async () => {
    expect(await restNames(ACME, '?limit=1')).toEqual([main]);
    expect(await graphNames(ACME, '(limit: 1)')).toEqual([main]);
  });

  it('answers an empty list for a target the caller may not see, and the target named otherwise', async () => {
    expect(await restNames(ACME, `?target=${LEDGER.namespace}/${LEDGER.name}`)).toEqual([]);
    expect(await graphNames(ACME, `(target: "${LEDGER.namespace}/${LEDGER.name}")`)).toEqual([]);
    expect(await restNames(GLOBEX, `?target=${LEDGER.namespace}/${LEDGER.name}`)).toEqual([ledger]);
    expect(await graphNames(VIEWER, `(target: "${MAIN.namespace}/${MAIN.name}")`)).toEqual([main]);
  });

  it('answers a restore the caller may not see as an unknown one', async () => {
    const notFound = (namespace: string, name: string) => ({ error: `Restore ${namespace}/${name} was not found.` });
    expect((await restAs(h, ACME, `/api/v1/restores/${LEDGER.namespace}/${ledger}`)).body).toEqual(notFound(LEDGER.namespace, ledger));
    expect((await restAs(h, ACME, `/api/v1/restores/${LEDGER.namespace}/nothing-here`)).body).toEqual(notFound(LEDGER.namespace, 'nothing-here'));
  });

  it('shows nobody a restore whose target is gone', async () => {
    expect(await restNames(VIEWER)).not.toContain(RETIRED.name);
    expect(await readable(VIEWER, RETIRED.namespace, RETIRED.name)).toBe(false);
  });
});
