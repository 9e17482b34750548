/**
 * The billing page's words and numbers, as pure functions: amounts come in cents (the API's), periods as ISO moments
 * whose end is exclusive (Free's period ends at the next month's first midnight, UTC), days as `YYYY-MM-DD` in UTC.
 */

const DAY_MS = 86_400_000;

/** An amount in cents as money people read: `$29.00`, `$0.10`, `-$5.00`. */
export function formatCents(cents: number, currency = 'usd', locale = 'en-US'): string {
  return new Intl.NumberFormat(locale, { style: 'currency', currency: currency.toUpperCase() }).format(cents / 100);
}

/** A plan's price: whole dollars without cents (`$29`), anything else as `formatCents` writes it. */
export function formatPrice(cents: number, locale = 'en-US'): string {
  if (cents % 100 !== 0) return formatCents(cents, 'usd', locale);
  return new Intl.NumberFormat(locale, { style: 'currency', currency: 'USD', maximumFractionDigits: 0 }).format(cents / 100);
}

export function formatCount(count: number, locale = 'en-US'): string {
  return new Intl.NumberFormat(locale).format(count);
}

/** `1 completed envelope`, `2,000 completed envelopes`. */
export function envelopes(count: number, what = 'completed envelope', locale = 'en-US'): string {
  return `${formatCount(count, locale)} ${what}${count === 1 ? '' : 's'}`;
}

/** The UTC day (`YYYY-MM-DD`) of a moment. */
export function utcDay(at: string | Date): string {
  return new Date(at).toISOString().slice(0, 10);
}

/** The last day a period covers: its end is exclusive, so a period ending at midnight ends the day before. */
export function lastDayOf(periodEnd: string): string {
  const end = new Date(periodEnd);
  return end.getTime() % DAY_MS === 0 ? utcDay(new Date(end.getTime() - DAY_MS)) : utcDay(end);
}

/** A UTC day as people read it: `Nov 1` (`Nov 1, 2026` with the year). */
export function dayWords(day: string, { year = false, locale = 'en-US' }: { year?: boolean; locale?: string } = {}): string {
  return new Date(`${day}T00:00:00Z`).toLocaleDateString(locale, { month: 'short', day: 'numeric', ...(year ? { year: 'numeric' } : {}), timeZone: 'UTC' });
}

/** A period from its first to its last day: `Nov 1 – Nov 30, 2026`, or `Dec 28, 2026 – Jan 27, 2027` across years. */
export function periodWords(start: string, end: string, locale = 'en-US'): string {
  const first = utcDay(start);
  const last = lastDayOf(end);
  const sameYear = first.slice(0, 4) === last.slice(0, 4);
  return `${dayWords(first, { year: !sameYear, locale })} – ${dayWords(last, { year: true, locale })}`;
}

/** One day of the usage chart: `count` null for a day of the period still to come. */
export interface ChartDay {
  date: string;
  count: number | null;
}

/** The longest period the chart draws day by day (a subscription's month is at most 31 days). */
const MAX_CHART_DAYS = 62;

/**
 * Every day of the period for the chart: the API's daily series (the days so far, each with its count), then the days
 * still to come as empty (null), so the chart's width is the whole period from the first day.
 */
export function chartDays(daily: readonly { date: string; completedEnvelopes: number }[], periodStart: string, periodEnd: string): ChartDay[] {
  const counts = new Map(daily.map((d) => [d.date, d.completedEnvelopes]));
  const lastReported = daily.reduce((latest, d) => (d.date > latest ? d.date : latest), '');
  const days: ChartDay[] = [];
  const last = lastDayOf(periodEnd);
  for (let at = Date.parse(`${utcDay(periodStart)}T00:00:00Z`); days.length < MAX_CHART_DAYS; at += DAY_MS) {
    const date = utcDay(new Date(at));
    if (date > last) break;
    days.push({ date, count: counts.get(date) ?? (date > lastReported ? null : 0) });
  }
  return days;
}

/** What the chart says to someone who cannot see it. */
export function chartSummary(days: readonly ChartDay[], locale = 'en-US'): string {
  const counted = days.filter((d): d is { date: string; count: number } => d.count !== null);
  const total = counted.reduce((sum, d) => sum + d.count, 0);
  if (counted.length === 0) return 'No day of this period has passed yet.';
  const first = dayWords(counted[0]!.date, { locale });
  const range = counted.length === 1 ? `on ${first}` : `from ${first} to ${dayWords(counted.at(-1)!.date, { locale })}`;
  if (total === 0) return `No envelopes completed ${range}.`;
  const busiest = counted.reduce((top, d) => (d.count > top.count ? d : top));
  if (counted.length === 1) return `${envelopes(total, 'completed envelope', locale)} ${range}.`;
  return `${envelopes(total, 'completed envelope', locale)} ${range}; the busiest day was ${dayWords(busiest.date, { locale })} with ${formatCount(busiest.count, locale)}.`;
}

/** A round top for the chart's scale (1, 2, 5, 10, 20, 50, …) at or above the busiest day, so its gridline reads well. */
export function chartScale(days: readonly ChartDay[]): number {
  const busiest = Math.max(0, ...days.map((d) => d.count ?? 0));
  if (busiest <= 1) return 1;
  const magnitude = 10 ** Math.floor(Math.log10(busiest));
  return ([1, 2, 5, 10].map((step) => step * magnitude).find((top) => top >= busiest) ?? 10 * magnitude);
}

/** What pressing a plan's button does, in the words on it; undefined for the current plan and for Free (see below). */
export type PlanAction = { kind: 'add-card'; label: string } | { kind: 'change'; label: string; upgrade: boolean };

/**
 * The button a plan offer gets, from where the organization stands. The offers come in the catalog's order (cheapest
 * first), so a plan after the current one is an upgrade. Free is reached by cancelling in the processor's portal,
 * never by a checkout; a card (Pay-as-you-go) is added from Free with "Add a card".
 */
export function planAction(offers: readonly { id: string; name: string; current: boolean }[], target: { id: string; name: string; current: boolean }): PlanAction | undefined {
  if (target.current || target.id === 'free') return undefined;
  const current = offers.find((offer) => offer.current);
  if (target.id === 'payg' && (!current || current.id === 'free')) return { kind: 'add-card', label: 'Add a card' };
  const rank = (id: string) => offers.findIndex((offer) => offer.id === id);
  const upgrade = rank(target.id) > (current ? rank(current.id) : 0);
  return { kind: 'change', label: `${upgrade ? 'Upgrade' : 'Downgrade'} to ${target.name}`, upgrade };
}

/** A card as people read it: `Visa ending in 4242, expires 12/2030`. */
export function cardWords(card: { brand: string; last4: string; expMonth: number; expYear: number }): string {
  return `${brandName(card.brand)} ending in ${card.last4}, expires ${String(card.expMonth).padStart(2, '0')}/${card.expYear}`;
}

const BRANDS: Record<string, string> = { visa: 'Visa', mastercard: 'Mastercard', amex: 'American Express', discover: 'Discover', diners: 'Diners Club', jcb: 'JCB', unionpay: 'UnionPay' };

/** The processor's brand id (`visa`) as its name (`Visa`). */
export function brandName(brand: string): string {
  return BRANDS[brand.toLowerCase()] ?? brand.charAt(0).toUpperCase() + brand.slice(1);
}

/** The processor's subscription status in words (its ids are `past_due` and the like). */
export function statusWords(status: string): string {
  const words: Record<string, string> = { active: 'Active', trialing: 'Trial', past_due: 'Payment overdue', canceled: 'Canceled', incomplete: 'Payment incomplete' };
  return words[status] ?? status.replace(/_/g, ' ');
}

/** How much of the included envelopes a period used, 0 to 100 (a meter's fill; overage shows as full). */
export function usedShare(completed: number, included: number): number {
  if (included <= 0) return completed > 0 ? 100 : 0;
  return Math.min(100, Math.round((completed / included) * 100));
}
