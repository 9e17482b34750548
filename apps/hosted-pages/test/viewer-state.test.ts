import { describe, expect, it } from 'vitest';
import { changes, envelopeState, logoOf, progress, reconnectDelay, recipientState, recipientTime, refreshDelay, refusal } from '../public/viewer-state.js';

const envelope = (status: string, statuses: string[], documentAvailable = false) => ({
  status,
  documentAvailable,
  recipients: statuses.map((s, i) => ({ id: `rcp_${i}`, role: ['client', 'consultant', 'witness'][i]!, name: ['Ada Lovelace', 'Grace Hopper', ''][i], status: s })),
});

describe('the viewer page state', () => {
  it('names every envelope and recipient status, and marks the ends', () => {
    expect(envelopeState('sent')).toMatchObject({ label: 'In progress', over: false });
    for (const status of ['completed', 'declined', 'voided', 'expired']) expect(envelopeState(status).over).toBe(true);
    expect(envelopeState('something-new')).toMatchObject({ label: 'something-new', tone: 'neutral' });
    expect(recipientState('completed')).toEqual({ label: 'Signed', tone: 'success' });
    expect(recipientState('sent').label).toBe('Waiting to sign');
    expect(recipientTime({ role: 'client', status: 'completed', completedAt: '2026-01-02T03:04:05Z' })).toBe('2026-01-02T03:04:05Z');
    expect(recipientTime({ role: 'client', status: 'completed', signedAt: 'a', completedAt: 'b' })).toBe('a');
  });

  it('counts who signed', () => {
    expect(progress(envelope('sent', ['completed', 'sent', 'pending']))).toEqual({ signed: 1, total: 3 });
    expect(progress({ status: 'rendering' })).toEqual({ signed: 0, total: 0 });
  });

  it('says what changed between two reads, naming a nameless recipient by role', () => {
    expect(changes(undefined, envelope('sent', ['sent']))).toEqual([]);
    expect(changes(envelope('sent', ['completed', 'sent', 'pending']), envelope('sent', ['completed', 'sent', 'pending']))).toEqual([]);
    expect(changes(envelope('sent', ['completed', 'viewed', 'pending']), envelope('sent', ['completed', 'completed', 'sent']))).toEqual([
      'Grace Hopper signed.',
      "It is now The witness's turn to sign.",
    ]);
    expect(changes(envelope('sent', ['completed', 'completed', 'sent']), envelope('completed', ['completed', 'completed', 'completed'], true))).toEqual([
      'The witness signed.',
      'Status: Completed. Everyone has signed. The document is complete.',
      'The document can now be downloaded.',
    ]);
    expect(changes(envelope('sent', ['sent']), envelope('declined', ['declined']))).toEqual(['Ada Lovelace declined to sign.', expect.stringMatching(/^Status: Declined\./)]);
  });

  it('renews the access token a minute before it expires, never sooner than 5 s from now', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(refreshDelay('2026-01-01T00:15:00Z', now)).toBe(14 * 60_000);
    expect(refreshDelay('2026-01-01T00:00:30Z', now)).toBe(5_000);
  });

  it('reconnects after 1 s doubling up to 30 s', () => {
    expect([0, 1, 2, 3, 4, 5, 10].map((attempt) => reconnectDelay(attempt))).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000]);
    expect(reconnectDelay(0, 1)).toBe(1_500);
  });

  it('tells an invalid link (refused before anything was shown) from access that ended', () => {
    expect(refusal(401, false)).toBe('invalid');
    expect(refusal(404, false)).toBe('invalid');
    expect(refusal(401, true)).toBe('revoked');
    expect(refusal(503, true)).toBe('failed');
  });
});

describe("the organization's logo", () => {
  it('is an image of a web URL named by the organization, else none', () => {
    const logo = 'https://sigil.example.com/v1/public/logos/org_1/abc.svg';
    expect(logoOf({ status: 'sent', organizationName: 'Acme Legal', logoUrl: logo })).toEqual({ src: logo, alt: 'Acme Legal' });
    expect(logoOf({ status: 'sent', logoUrl: logo })).toEqual({ src: logo, alt: 'The sender' });
    expect(logoOf({ status: 'sent', organizationName: 'Acme', logoUrl: null })).toBeNull();
    expect(logoOf({ status: 'sent', organizationName: 'Acme', logoUrl: 'javascript:alert(1)' })).toBeNull();
  });
});
