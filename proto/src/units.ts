/**
 * Durations (`90s`, `1h30m`, `7d`, `2w`) and byte quantities (`16Mi`, `200Mi`) as Strata's resources and
 * console API write them. A module of its own so light clients (the CLI) can use it without the schemas.
 */

const DURATION_UNITS_MS = {
  ns: 1e-6,
  us: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
} as const;
type DurationUnit = keyof typeof DURATION_UNITS_MS;

/** The Duration pattern of common.schema.json. */
export const DURATION_PATTERN = /^([0-9]+(\.[0-9]+)?(ns|us|ms|s|m|h|d|w))+$/;
const DURATION_PART = /([0-9]+(?:\.[0-9]+)?)(ns|us|ms|s|m|h|d|w)/g;

export function describeInput(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/**
 * Milliseconds in a duration such as `90s`, `1h30m`, `1.5h`, `7d` or `2w` (units ns, us, ms, s, m,
 * h, d, w; they may repeat and are summed). Throws on anything else, including an empty string.
 */
export function parseDuration(text: string): number {
  if (typeof text !== 'string' || !DURATION_PATTERN.test(text)) {
    throw new Error(`${describeInput(text)} is not a duration (a number with a unit ns, us, ms, s, m, h, d or w, e.g. 90s, 1h30m, 7d)`);
  }
  let total = 0;
  for (const match of text.matchAll(DURATION_PART)) {
    total += Number(match[1]) * DURATION_UNITS_MS[match[2] as DurationUnit];
  }
  return total;
}

/**
 * A duration string for a number of milliseconds, largest units first: `5400000` → `1h30m`,
 * `1209600000` → `2w`, `0` → `0s`, `0.0015` → `1us500ns`. Sub-nanosecond remainders are rounded.
 * `parseDuration(formatDuration(ms))` gives `ms` back (to the nanosecond).
 */
export function formatDuration(ms: number): string {
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) {
    throw new RangeError(`formatDuration needs a finite, non-negative number of milliseconds, got ${describeInput(ms)}`);
  }
  let whole = Math.floor(ms);
  let subNs = Math.round((ms - whole) * 1e6);
  if (subNs >= 1e6) {
    whole += 1;
    subNs -= 1e6;
  }
  const parts: string[] = [];
  const take = (amount: number, unit: DurationUnit): number => {
    const size = DURATION_UNITS_MS[unit];
    const count = Math.floor(amount / size);
    if (count > 0) parts.push(`${count}${unit}`);
    return amount - count * size;
  };
  let rest = whole;
  for (const unit of ['w', 'd', 'h', 'm', 's', 'ms'] as const) rest = take(rest, unit);
  const us = Math.floor(subNs / 1000);
  const ns = subNs - us * 1000;
  if (us > 0) parts.push(`${us}us`);
  if (ns > 0) parts.push(`${ns}ns`);
  return parts.length === 0 ? '0s' : parts.join('');
}

const QUANTITY_MULTIPLIERS = {
  '': 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
} as const;

/** The ByteQuantity pattern of common.schema.json. */
export const BYTE_QUANTITY_PATTERN = /^[0-9]+(\.[0-9]+)?(k|M|G|T|Ki|Mi|Gi|Ti)?$/;

/**
 * Bytes in a quantity such as `16Mi`, `200Mi`, `1G`, `1.5Gi` or `4096`: decimal suffixes k, M, G, T
 * (powers of 1000), binary Ki, Mi, Gi, Ti (powers of 1024). A fractional result is rounded up to a
 * whole byte. Throws on anything else (`16MB`, `-1`, `16 Mi`, '').
 */
export function parseQuantity(text: string): number {
  const match = typeof text === 'string' ? /^([0-9]+(?:\.[0-9]+)?)(k|M|G|T|Ki|Mi|Gi|Ti)?$/.exec(text) : null;
  if (!match) {
    throw new Error(`${describeInput(text)} is not a byte quantity (a number with an optional k, M, G, T, Ki, Mi, Gi or Ti suffix, e.g. 16Mi)`);
  }
  const multiplier = QUANTITY_MULTIPLIERS[(match[2] ?? '') as keyof typeof QUANTITY_MULTIPLIERS];
  return Math.ceil(Number(match[1]) * multiplier);
}

