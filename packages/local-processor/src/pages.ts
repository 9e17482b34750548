/** The hosted pages a person clicks through: checkout, its closed states, the customer portal and its card form. */
import type { CardField, CardForm } from './cards.ts';
import type { CheckoutSession, PaymentMethod, PortalSession, Price, Product, Subscription } from './objects.ts';
import { html, originOf, type Page } from './page-layout.ts';
import { longDate, money, priceText } from './price-text.ts';

export interface PricedItem {
  price: Price;
  product: Product | undefined;
}

export interface FormProblem {
  field: CardField;
  message: string;
}

const EMPTY_FORM: CardForm = { card: '', expiry: '', cvc: '', name: '' };

export function checkoutPage(session: CheckoutSession, items: PricedItem[], problem?: FormProblem, values: CardForm = EMPTY_FORM): Page {
  const planName = items[0]?.product?.name ?? 'your plan';
  const monthly = items.filter((item) => item.price.recurring.usage_type === 'licensed').reduce((sum, item) => sum + (item.price.unit_amount ?? 0), 0);
  const metered = items.some((item) => item.price.recurring.usage_type === 'metered');
  const body = `<div class="columns">
<section aria-labelledby="summary-title">
<h1 id="summary-title">Subscribe to ${html(planName)}</h1>
<p class="price">${html(money(monthly))} <small>per month</small></p>
${metered ? '<p class="muted">Plus what you use, at the rates below.</p>' : ''}
${itemList(items)}
<p class="muted">Due today: <strong>${html(money(session.amount_total))}</strong>. Usage is billed at the end of each monthly period.</p>
</section>
<section class="panel" aria-labelledby="pay-title">
<h2 id="pay-title">Pay with card</h2>
<form method="post" action="/checkout/${html(session.id)}" novalidate>
${cardFields(values, problem)}
<button class="button primary" type="submit">Subscribe</button>
</form>
</section>
</div>`;
  return { title: `Subscribe to ${planName}`, body, formTargets: originOf(session.success_url), ...backTo(session.cancel_url) };
}

/** A session that can no longer be paid: complete (with the way on) or expired. */
export function closedCheckoutPage(session: CheckoutSession): Page {
  if (session.status === 'complete') {
    const next = session.success_url.replaceAll('{CHECKOUT_SESSION_ID}', encodeURIComponent(session.id));
    const body = `<section class="panel narrow" aria-labelledby="done-title"><h1 id="done-title">This checkout is complete</h1>
<p>The subscription started and the card was saved. Nothing more to pay here.</p>
<p><a class="button secondary" href="${html(next)}">Return to Sigil</a></p></section>`;
    return { title: 'Checkout complete', body };
  }
  const body = `<section class="panel narrow" aria-labelledby="expired-title"><h1 id="expired-title">This checkout has expired</h1>
<p>Start again from Sigil to subscribe.</p>
${session.cancel_url ? `<p><a class="button secondary" href="${html(session.cancel_url)}">Return to Sigil</a></p>` : ''}</section>`;
  return { title: 'Checkout expired', body };
}

export interface PortalView {
  session: PortalSession;
  subscription: Subscription | undefined;
  items: PricedItem[];
  paymentMethod: PaymentMethod | undefined;
  notice: string | undefined;
}

export function portalPage(view: PortalView): Page {
  const notice = view.notice ? `<p class="notice" role="status">${html(view.notice)}</p>` : '';
  const body = `<div class="narrow">${notice}<h1>Billing</h1>
<p class="muted">Manage the plan and the card Sigil charges.</p>
${planPanel(view)}
${cardPanel(view)}</div>`;
  return { title: 'Billing', body, ...backTo(view.session.return_url) };
}

export function cardUpdatePage(session: PortalSession, problem?: FormProblem, values: CardForm = EMPTY_FORM): Page {
  const body = `<section class="panel narrow" aria-labelledby="card-title">
<h1 id="card-title">Update card</h1>
<p class="muted">The new card pays the subscription from its next charge on.</p>
<form method="post" action="/portal/${html(session.id)}/card" novalidate>
${cardFields(values, problem)}
<button class="button primary" type="submit">Save card</button>
</form>
<p><a href="/portal/${html(session.id)}">Back to billing</a></p>
</section>`;
  return { title: 'Update card', body, ...backTo(session.return_url) };
}

export function notFoundPage(message: string): Page {
  return { title: 'Not found', body: `<section class="panel narrow" aria-labelledby="missing-title"><h1 id="missing-title">This page does not exist</h1><p>${html(message)}</p></section>` };
}

function planPanel(view: PortalView): string {
  const { subscription, session } = view;
  if (!subscription) return `<section class="panel" aria-labelledby="plan-title"><h2 id="plan-title">Current plan</h2><p>There is no subscription yet.</p></section>`;
  const end = subscription.items.data[0]?.current_period_end;
  const status =
    subscription.status === 'canceled'
      ? `Canceled on ${longDate(subscription.ended_at ?? subscription.canceled_at ?? subscription.created)}.`
      : end === undefined
        ? ''
        : subscription.cancel_at_period_end
          ? `Cancels on ${longDate(end)}.`
          : `Renews on ${longDate(end)}.`;
  const action =
    subscription.status === 'canceled'
      ? ''
      : subscription.cancel_at_period_end
        ? `<form method="post" action="/portal/${html(session.id)}/renew"><button class="button secondary" type="submit">Renew subscription</button></form>`
        : `<form method="post" action="/portal/${html(session.id)}/cancel"><button class="button danger" type="submit">Cancel subscription</button></form>`;
  return `<section class="panel" aria-labelledby="plan-title">
<h2 id="plan-title">Current plan</h2>
<p class="card-line">${html(view.items[0]?.product?.name ?? 'Subscription')}</p>
<p class="muted">${html(status)}</p>
${itemList(view.items)}
<div class="actions">${action}</div>
</section>`;
}

function cardPanel(view: PortalView): string {
  const card = view.paymentMethod?.card;
  const line = card
    ? `<p class="card-line">${html(card.brand === 'visa' ? 'Visa' : card.brand)} ending in ${html(card.last4)}</p><p class="muted">Expires ${html(String(card.exp_month).padStart(2, '0'))}/${html(card.exp_year)}</p>`
    : '<p>No card is saved.</p>';
  return `<section class="panel" aria-labelledby="card-title">
<h2 id="card-title">Payment method</h2>
${line}
<div class="actions"><a class="button secondary" href="/portal/${html(view.session.id)}/card">Update card</a></div>
</section>`;
}

function itemList(items: PricedItem[]): string {
  const rows = items.map((item) => `<li><span>${html(item.price.nickname ?? item.product?.name ?? 'Item')}</span><span class="amount">${html(priceText(item.price, item.product))}</span></li>`);
  return `<ul class="lines">${rows.join('')}</ul>`;
}

/** The card form's fields, refilled after a refusal (the security code never is) with the message by its field. */
function cardFields(values: CardForm, problem: FormProblem | undefined): string {
  const field = (name: CardField, label: string, attributes: string) => {
    const failed = problem?.field === name;
    const value = name === 'cvc' ? '' : values[name];
    return `<div class="field">
<label for="${name}">${label}</label>
<input id="${name}" name="${name}" ${attributes} value="${html(value)}"${failed ? ` aria-invalid="true" aria-describedby="${name}-error"` : ''}>
${failed ? `<p class="error" id="${name}-error" role="alert">${html(problem.message)}</p>` : ''}
</div>`;
  };
  return `${field('card', 'Card number', 'inputmode="numeric" autocomplete="cc-number" placeholder="1234 1234 1234 1234" maxlength="23" required')}
<div class="pair">
${field('expiry', 'Expiry date', 'autocomplete="cc-exp" placeholder="MM / YY" maxlength="9" required')}
${field('cvc', 'Security code', 'inputmode="numeric" autocomplete="cc-csc" placeholder="CVC" maxlength="4" required')}
</div>
${field('name', 'Name on card', 'autocomplete="cc-name" maxlength="100" required')}
<p class="hint">Test mode: 4242 4242 4242 4242 pays, 4000 0000 0000 0002 is declined. Use any future date and any three digits.</p>`;
}

function backTo(url: string | null): Pick<Page, 'back'> {
  return url ? { back: { href: url, label: 'Return to Sigil' } } : {};
}
