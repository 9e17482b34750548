import type { Billing, Invoice } from './query.ts';
import { dayWords, formatCents, formatCount, periodWords, utcDay } from './format.ts';

/**
 * The next invoice as the API computes it from the plan and this period's usage: one row per line (base price,
 * included envelopes at $0, each overage tier, each add-on), amounts in dollars from the API's cents. Free has none.
 */
export function UpcomingInvoice({ billing }: { billing: Billing }) {
  const invoice = billing.upcomingInvoice;
  return (
    <section className="panel billing-card billing-invoice" aria-labelledby="billing-invoice">
      <h2 id="billing-invoice" className="billing-eyebrow">
        Upcoming invoice
      </h2>
      {invoice ? (
        <>
          <p className="billing-invoice-total">
            <span className="billing-amount">{formatCents(invoice.total, invoice.currency)}</span> <span className="muted">billed on {dayWords(utcDay(invoice.periodEnd), { year: true })}</span>
          </p>
          <InvoiceLines invoice={invoice} />
        </>
      ) : (
        <p className="muted billing-empty">None: Free costs nothing. Add a card or choose a plan below to be billed for what you use.</p>
      )}
    </section>
  );
}

function InvoiceLines({ invoice }: { invoice: Invoice }) {
  const money = (cents: number) => formatCents(cents, invoice.currency);
  return (
    <div className="table-wrap">
      <table className="table billing-invoice-table">
        <caption>
          For {periodWords(invoice.periodStart, invoice.periodEnd)} (UTC), so far: the usage lines grow as envelopes complete.
        </caption>
        <thead>
          <tr>
            <th scope="col">Description</th>
            <th scope="col" className="billing-number billing-col-detail">
              Quantity
            </th>
            <th scope="col" className="billing-number billing-col-detail">
              Unit price
            </th>
            <th scope="col" className="billing-number">
              Amount
            </th>
          </tr>
        </thead>
        <tbody>
          {invoice.lines.map((line, index) => (
            <tr key={`${index}-${line.description}`}>
              <th scope="row">
                {line.description}
                {/* On a phone the quantity and unit price columns give way to this line. */}
                <span className="billing-line-detail">
                  {formatCount(line.quantity)} × {money(line.unitAmount)}
                </span>
              </th>
              <td className="billing-number billing-col-detail">{formatCount(line.quantity)}</td>
              <td className="billing-number billing-col-detail">{money(line.unitAmount)}</td>
              <td className="billing-number">{money(line.amount)}</td>
            </tr>
          ))}
        </tbody>
        <tfoot>
          {invoice.subtotal !== invoice.total && (
            <SumRow label="Subtotal" amount={money(invoice.subtotal)} />
          )}
          <SumRow label="Total" amount={money(invoice.total)} />
        </tfoot>
      </table>
    </div>
  );
}

/** A sum under the lines; its empty quantity and unit price cells go with their columns on a phone. */
function SumRow({ label, amount }: { label: string; amount: string }) {
  return (
    <tr>
      <th scope="row">{label}</th>
      <td className="billing-col-detail" />
      <td className="billing-col-detail" />
      <td className="billing-number">{amount}</td>
    </tr>
  );
}
