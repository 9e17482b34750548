import { describe, expect, it } from 'vitest';
import {
  ENVELOPE_STATUSES,
  ENVELOPE_TRANSITIONS,
  RECIPIENT_STATUSES,
  RECIPIENT_TRANSITIONS,
  envelopeTransition,
  isRecipientsTurn,
  nextTurn,
  recipientTransition,
  type EnvelopeAction,
  type RecipientAction,
} from '../src/state.ts';

// Every (status, action) pair: the allowed ones with their result, everything else refused.
const ENVELOPE_TABLE: Record<EnvelopeAction, Partial<Record<(typeof ENVELOPE_STATUSES)[number], string>>> = {
  rendered: { rendering: 'sent' },
  void: { rendering: 'voided', sent: 'voided' },
  expire: { rendering: 'expired', sent: 'expired' },
  complete: { sent: 'completed' },
  decline: { sent: 'declined' },
};
const RECIPIENT_TABLE: Record<RecipientAction, Partial<Record<(typeof RECIPIENT_STATUSES)[number], string>>> = {
  turn: { pending: 'sent' },
  view: { sent: 'viewed' },
  sign: { sent: 'completed', viewed: 'completed' },
  decline: { sent: 'declined', viewed: 'declined' },
};

describe('envelope transitions', () => {
  it('the table names every action of the module', () => expect(Object.keys(ENVELOPE_TABLE).sort()).toEqual(Object.keys(ENVELOPE_TRANSITIONS).sort()));
  for (const [action, allowed] of Object.entries(ENVELOPE_TABLE) as Array<[EnvelopeAction, Record<string, string>]>) {
    for (const status of ENVELOPE_STATUSES) {
      const to = allowed[status];
      it(`${action} from ${status}: ${to ?? 'refused (409)'}`, () => {
        if (to) expect(envelopeTransition(status, action)).toBe(to);
        else expect(() => envelopeTransition(status, action, 'Envelope env_x')).toThrow(expect.objectContaining({ code: 'conflict', status: 409, message: expect.stringContaining(`(it is ${status})`) }));
      });
    }
  }
});

describe('recipient transitions', () => {
  it('the table names every action of the module', () => expect(Object.keys(RECIPIENT_TABLE).sort()).toEqual(Object.keys(RECIPIENT_TRANSITIONS).sort()));
  for (const [action, allowed] of Object.entries(RECIPIENT_TABLE) as Array<[RecipientAction, Record<string, string>]>) {
    for (const status of RECIPIENT_STATUSES) {
      const to = allowed[status];
      it(`${action} from ${status}: ${to ?? 'refused (409)'}`, () => {
        if (to) expect(recipientTransition(status, action)).toBe(to);
        else expect(() => recipientTransition(status, action)).toThrow(expect.objectContaining({ code: 'conflict' }));
      });
    }
  }
});

describe('routing', () => {
  const r = (id: string, order: number, status: string) => ({ id, order, status });
  it('starts the lowest order; ties start together', () => {
    expect(nextTurn([r('a', 1, 'pending'), r('b', 1, 'pending'), r('c', 2, 'pending')])).toEqual({ start: ['a', 'b'], done: false });
  });
  it('waits until every recipient of the current order completed', () => {
    expect(nextTurn([r('a', 1, 'completed'), r('b', 1, 'viewed'), r('c', 2, 'pending')])).toEqual({ start: [], done: false });
    expect(nextTurn([r('a', 1, 'completed'), r('b', 1, 'completed'), r('c', 2, 'pending')])).toEqual({ start: ['c'], done: false });
  });
  it('is done when everyone completed', () => expect(nextTurn([r('a', 1, 'completed'), r('c', 5, 'completed')])).toEqual({ start: [], done: true }));
  it("a recipient's turn is sent or viewed on a sent envelope", () => {
    expect(isRecipientsTurn('sent', 'sent')).toBe(true);
    expect(isRecipientsTurn('sent', 'viewed')).toBe(true);
    expect(isRecipientsTurn('sent', 'pending')).toBe(false);
    expect(isRecipientsTurn('voided', 'sent')).toBe(false);
  });
});
