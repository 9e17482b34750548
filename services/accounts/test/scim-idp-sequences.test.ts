// SCIM against recorded Okta and Entra request sequences (test/fixtures/scim/*.json): every request replayed in
// order, every answer checked, and after each step the member's role in Sigil (or that they are no member).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { createHarness, type Harness } from './helpers.ts';
import { loadFixture, replay, scimOrganization } from './scim-support.ts';

let h: Harness;
beforeAll(async () => {
  h = await createHarness('scim_idp', { publicUrl: 'https://sigil.example.test' });
});
afterAll(async () => {
  await h?.close();
});

const actions = async (headers: Record<string, string>) =>
  ((await request(h.app).get('/v1/sso/audit?limit=100').set(headers)).body.data as { action: string; outcome: string }[]).map((e) => e.action).reverse();

describe.each(['okta.json', 'entra.json'])('%s', (file) => {
  it('replays the sequence with the expected answers and effects', async () => {
    const org = await scimOrganization(h);
    const fixture = loadFixture(file);
    expect(fixture.steps.length).toBeGreaterThan(10);
    await replay(h, org, fixture);
    const trail = await actions(org.owner.headers);
    expect(trail[0]).toBe('scim.token_created');
    for (const action of ['scim.user_created', 'scim.user_updated', 'scim.user_deactivated', 'scim.group_created', 'scim.group_updated', 'scim.group_deleted']) {
      expect(trail).toContain(action);
    }
    if (file === 'entra.json') expect(trail).toContain('scim.user_deleted');
  });
});
