import { expect } from 'vitest';
import type { Page } from 'playwright-core';
import { upgradeToTeam } from './checkout.ts';
import { type Accessibility, agreementPdf, DESKTOP, PHONE, screenshots } from './dashboard-pages.ts';
import { call, signUp, until, type Reply, type TestStack } from './stack.ts';

/** What the end-to-end tests of the hosted viewer and link pages share: a paying organization, the inbox, the audits. */

export type OwnerApi = (method: string, path: string, body?: unknown) => Promise<Reply>;

/**
 * A new organization on Team (paid through billing's real flow), its owner's API in test mode (a dashboard session),
 * and a published one-page template with these roles and fields.
 */
export async function teamWithTemplate(
  stack: TestStack,
  owner: string,
  template: { roles: Array<{ name: string; order: number }>; fields: Array<Record<string, unknown>> },
): Promise<{ cookie: string; api: OwnerApi; templateId: string }> {
  const { cookie } = await signUp(stack.gatewayUrl, owner, 'Analytical Engines');
  await upgradeToTeam(stack.gatewayUrl, cookie);
  const api: OwnerApi = (method, path, body) => call(stack.gatewayUrl, method, path, { body, headers: { cookie, 'sigil-mode': 'test' } });
  const templateId = (await api('POST', '/v1/templates', { name: 'Consulting agreement' })).body.id as string;
  const upload = await fetch(`${stack.gatewayUrl}/v1/templates/${templateId}/files`, { method: 'POST', headers: { cookie, 'sigil-mode': 'test', 'content-type': 'application/pdf' }, body: await agreementPdf() });
  expect(upload.status).toBe(201);
  const draft = await api('PUT', `/v1/templates/${templateId}/draft`, { file: ((await upload.json()) as { id: string }).id, ...template, variables: [] });
  expect(draft.status, JSON.stringify(draft.body)).toBe(200);
  expect((await api('POST', `/v1/templates/${templateId}/publish`)).status).toBe(201);
  return { cookie, api, templateId };
}

export interface Mail {
  to: string[];
  subject: string;
  text: string;
  receivedAt: string;
}

/** The first mail to `to` since `since` that `matches`, from the stack's inbox (waiting for it). */
export async function mailTo(stack: TestStack, to: string, since: string, matches: (mail: Mail) => boolean): Promise<Mail> {
  const find = (messages: Mail[]) => messages.find((m) => m.to.includes(to) && m.receivedAt >= since && matches(m));
  return find(await until(async () => (await (await fetch(`${stack.infra.smtp.inboxUrl}/messages`)).json()) as Mail[], (all) => find(all) !== undefined)) as Mail;
}

/** axe at desktop and phone widths, then the screenshots (docs/hosted-pages/ with UPDATE_SCREENSHOTS=1). */
export async function auditPage(page: Page, a11y: Accessibility, name: string): Promise<void> {
  await a11y.check(page, name);
  await page.setViewportSize(PHONE);
  await a11y.check(page, `${name} (phone)`);
  await page.setViewportSize(DESKTOP);
  await screenshots(page, name, 'hosted-pages');
}
