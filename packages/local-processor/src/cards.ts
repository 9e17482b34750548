/**
 * The card form of the hosted pages, checked as the processor's test mode does: 4242 4242 4242 4242 is a Visa that
 * pays, 4000 0000 0000 0002 is declined, any other number is invalid. Messages are the processor's own words.
 */

export interface CardForm {
  card: string;
  expiry: string;
  cvc: string;
  name: string;
}

export interface AcceptedCard {
  brand: 'visa';
  last4: string;
  expMonth: number;
  expYear: number;
  name: string;
}

export type CardField = keyof CardForm;

export type CardCheck = { ok: true; card: AcceptedCard } | { ok: false; status: 400 | 402; field: CardField; message: string };

export const PAYING_CARD = '4242424242424242';
export const DECLINED_CARD = '4000000000000002';

/** Whether the form holds a card that pays; else the field at fault, its message, and the status of the answer. */
export function checkCard(form: CardForm, today: Date): CardCheck {
  const number = form.card.replace(/[\s-]/g, '');
  if (number !== PAYING_CARD && number !== DECLINED_CARD) return refuse(400, 'card', 'Your card number is invalid.');
  const expiry = readExpiry(form.expiry);
  if (!expiry) return refuse(400, 'expiry', "Your card's expiration date is incomplete.");
  const thisMonth = today.getUTCFullYear() * 12 + today.getUTCMonth();
  if (expiry.year * 12 + (expiry.month - 1) < thisMonth) return refuse(400, 'expiry', "Your card's expiration date is in the past.");
  if (!/^\d{3,4}$/.test(form.cvc.trim())) return refuse(400, 'cvc', "Your card's security code is incomplete.");
  const name = form.name.trim();
  if (!name) return refuse(400, 'name', 'Enter the name on the card.');
  if (number === DECLINED_CARD) return refuse(402, 'card', 'Your card was declined.');
  return { ok: true, card: { brand: 'visa', last4: number.slice(-4), expMonth: expiry.month, expYear: expiry.year, name } };
}

/** `MM / YY` (or `MM/YYYY`), as people type it. */
function readExpiry(text: string): { month: number; year: number } | undefined {
  const match = /^\s*(\d{1,2})\s*\/\s*(\d{2}|\d{4})\s*$/.exec(text);
  if (!match) return undefined;
  const month = Number(match[1]);
  const year = match[2]!.length === 2 ? 2000 + Number(match[2]) : Number(match[2]);
  return month >= 1 && month <= 12 ? { month, year } : undefined;
}

function refuse(status: 400 | 402, field: CardField, message: string): CardCheck {
  return { ok: false, status, field, message };
}
