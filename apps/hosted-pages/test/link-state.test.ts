import { describe, expect, it } from 'vitest';
import { ApiError, retryAfterSeconds, waitText } from '../public/problem.js';
import { fieldLines, linkView, messageOf, mustStartAgain, pageStateOf, placeOf, webImage } from '../public/link-state.js';

const problem = (status: number, slug: string, detail: string, pointers: string[] = [], retryAfter?: number) =>
  new ApiError(status, { type: `https://sigil.dev/problems/${slug}`, detail, errors: pointers.length ? pointers.map((pointer) => ({ pointer, detail: 'is wrong' })) : undefined }, retryAfter);

describe('the link page state', () => {
  it('describes the link and what the visitor will fill', () => {
    expect(fieldLines([
      { type: 'signature', required: true },
      { type: 'signature', required: true },
      { type: 'text', required: true, label: 'Company name' },
      { type: 'date', required: false },
      { type: 'text', required: true },
    ])).toEqual(['Sign', 'Fill in: Company name', 'Enter a date (optional)', 'Fill in a text field']);
    expect(linkView({ id: 'lnk_1', name: 'NDA', organizationName: 'Acme', enabled: false })).toMatchObject({ title: 'NDA', organization: 'Acme', paused: true, lines: [] });
    expect(linkView({ id: 'lnk_1', title: 'Order', status: 'active', testMode: true })).toMatchObject({ title: 'Order', organization: 'The sender', paused: false, testMode: true });
  });

  it("shows the organization's logo only from a web URL", () => {
    const logo = 'https://sigil.example.com/v1/public/logos/org_1/abc.png';
    expect(linkView({ organizationName: 'Acme Legal', logoUrl: logo })).toMatchObject({ organization: 'Acme Legal', logoUrl: logo });
    expect(linkView({ organizationName: 'Acme', logoUrl: null }).logoUrl).toBeNull();
    expect(webImage('javascript:alert(1)')).toBeNull();
    expect(webImage('data:image/svg+xml,<svg onload=alert(1)>')).toBeNull();
    expect(webImage(42)).toBeNull();
  });

  it('puts each error beside the field it concerns', () => {
    expect(placeOf(problem(400, 'validation-failed', 'bad e-mail', ['/body/email']), 'details')).toBe('email');
    expect(placeOf(problem(400, 'validation-failed', 'no name', ['/body/name']), 'details')).toBe('name');
    expect(placeOf(problem(400, 'validation-failed', 'wrong code (4 tries left)', ['/body/code']), 'code')).toBe('code');
    expect(placeOf(problem(400, 'validation-failed', 'wrong code'), 'code')).toBe('code');
    expect(placeOf(problem(429, 'rate-limited', 'Too many'), 'details')).toBe('form');
    expect(placeOf(problem(429, 'rate-limited', 'Too many'), 'code')).toBe('form');
    expect(placeOf(problem(409, 'link-paused', 'Paused'), 'code')).toBe('form');
    expect(placeOf(problem(400, 'validation-failed', 'bad e-mail', ['/body/email']), 'code')).toBe('code');
  });

  it('takes the whole page for a link that is gone or paused', () => {
    expect(pageStateOf(problem(404, 'not-found', 'No link'))).toBe('gone');
    expect(pageStateOf(problem(409, 'link-paused', 'Paused'))).toBe('paused');
    expect(pageStateOf(problem(409, 'conflict', 'Spent'))).toBeUndefined();
    expect(pageStateOf(problem(404, 'not-found', 'No code was sent for this link to that address: start again.'))).toBeUndefined();
  });

  it('asks to start again once a code has expired or has no tries left', () => {
    expect(mustStartAgain(problem(400, 'validation-failed', 'The code has expired: start again.', ['/body/code']))).toBe(true);
    expect(mustStartAgain(problem(400, 'validation-failed', 'No verification lvf_x.', ['/body/verification']))).toBe(true);
    expect(mustStartAgain(problem(409, 'conflict', 'The code has no attempts left.'))).toBe(true);
    expect(mustStartAgain(problem(400, 'validation-failed', 'The code is not the one we sent (4 tries left).', ['/body/code']))).toBe(false);
    expect(mustStartAgain(problem(409, 'link-paused', 'This link expired'))).toBe(false);
    const tooMany = problem(429, 'rate-limited', 'Too many wrong codes: start again to get a new code.', [], 1);
    expect(mustStartAgain(tooMany)).toBe(true);
    expect(placeOf(tooMany, 'code')).toBe('code');
    expect(messageOf(tooMany)).toBe('Too many wrong codes: start again to get a new code.');
  });

  it('says when a capped visitor can try again', () => {
    const now = Date.parse('2026-01-01T10:00:00Z');
    expect(messageOf(problem(429, 'rate-limited', 'Too many starts from this address.', [], 42), now)).toBe('Too many starts from this address. You can try again in 42 seconds.');
    expect(messageOf(problem(429, 'rate-limited', 'The link reached its daily cap.', [], 3 * 3600), now)).toMatch(/^The link reached its daily cap\. You can try again in about 3 hours, at .+\.$/);
    expect(messageOf(problem(429, 'rate-limited', 'The most a day; try again tomorrow (UTC).', [], 8 * 3600), now)).toMatch(/^The most a day; try again tomorrow \(UTC\)\. That is in about 8 hours, at .+\.$/);
    expect(messageOf(problem(400, 'validation-failed', 'Wrong code.'))).toBe('Wrong code.');
  });

  it('reads Retry-After as seconds or as a date', () => {
    const now = Date.parse('2026-01-01T10:00:00Z');
    expect(retryAfterSeconds('120', now)).toBe(120);
    expect(retryAfterSeconds('Thu, 01 Jan 2026 10:05:00 GMT', now)).toBe(300);
    expect(retryAfterSeconds(null, now)).toBeUndefined();
    expect(retryAfterSeconds('soon', now)).toBeUndefined();
    expect([0, 45, 600, 3600, 5 * 3600].map(waitText)).toEqual(['in a moment', 'in 45 seconds', 'in 10 minutes', 'in 60 minutes', 'in about 5 hours']);
  });
});
