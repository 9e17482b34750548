/** How the hosted pages say an amount and a price: "$29.00 per month", "$0.10 per envelope", tiers in words. */
import type { Price, Product } from './objects.ts';

const usd = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD' });
const count = new Intl.NumberFormat('en-US');
const day = new Intl.DateTimeFormat('en-US', { dateStyle: 'long', timeZone: 'UTC' });

export const money = (cents: number): string => usd.format(cents / 100);

export const longDate = (unixSeconds: number): string => day.format(new Date(unixSeconds * 1000));

export function priceText(price: Price, product: Product | undefined): string {
  const unit = product?.unit_label ?? 'unit';
  if (price.recurring.usage_type === 'licensed') return `${money(price.unit_amount ?? 0)} per month`;
  if (price.billing_scheme === 'per_unit' || !price.tiers) return `${money(price.unit_amount ?? 0)} per ${unit}`;
  return tiersText(price.tiers, unit);
}

/** Graduated tiers: "$0.08 per envelope for the first 8,000, $0.05 per envelope up to 48,000, then $0.03 per envelope". */
function tiersText(tiers: NonNullable<Price['tiers']>, unit: string): string {
  return tiers
    .map((tier, index) => {
      const each = `${money(tier.unit_amount)} per ${unit}`;
      if (tier.up_to === null) return index === 0 ? each : `then ${each}`;
      return index === 0 ? `${each} for the first ${count.format(tier.up_to)}` : `${each} up to ${count.format(tier.up_to)}`;
    })
    .join(', ');
}
