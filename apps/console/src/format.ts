/** Sizes as people read them: 1.2 GB, 340 MB (powers of 1000, as storage bills count). */
export function bytes(value: number): string {
  if (!Number.isFinite(value) || value <= 0) return '0 B';
  const units = ['B', 'KB', 'MB', 'GB', 'TB', 'PB'];
  const power = Math.min(units.length - 1, Math.floor(Math.log10(value) / 3));
  const scaled = value / 1000 ** power;
  return `${scaled >= 100 || power === 0 ? Math.round(scaled) : scaled.toFixed(1)} ${units[power]}`;
}

/** A span of seconds as people read it: 45 s, 12 min, 3 h 5 min, 2 d 4 h. */
export function duration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return '—';
  if (seconds < 60) return `${Math.round(seconds)} s`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return minutes % 60 ? `${hours} h ${minutes % 60} min` : `${hours} h`;
  const days = Math.floor(hours / 24);
  return hours % 24 ? `${days} d ${hours % 24} h` : `${days} d`;
}

/** A moment in the person's time zone, to the second, with its UTC form: "28 Nov 2026, 14:03:07 (13:03:07 UTC)". */
export function formatMoment(at: number): string {
  const date = new Date(at);
  return `${localMoment.format(date)} (${date.toISOString().slice(11, 19)} UTC)`;
}

/**
 * Made once: `toLocaleString` with options builds a new formatter at every call, and a timeline of 2,000 backups
 * formats thousands of moments per render (that was most of its script time).
 */
const localMoment = new Intl.DateTimeFormat(undefined, { day: 'numeric', month: 'short', year: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit' });

/** A count with its noun, singular for exactly one: "1 backup", "3 backups", "0 tables"; `plural` for irregular nouns. */
export function count(n: number, singular: string, plural = `${singular}s`): string {
  return `${n.toLocaleString()} ${n === 1 ? singular : plural}`;
}

/** The multipliers of a Kubernetes quantity's suffixes: binary (Ki = 1024) and decimal (k = 1000, m = a thousandth). */
const QUANTITY_SUFFIXES: Record<string, number> = {
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
  m: 1e-3,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
};

/**
 * The bytes of a Kubernetes-style quantity (`1Gi`, `1664672Ki`, `500M`, `1e9`, `1000`), as a sandbox's size limit is
 * written; undefined when it is not one.
 */
export function quantityBytes(quantity: string): number | undefined {
  const match = /^([+-]?(?:\d+(?:\.\d*)?|\.\d+))(?:([KMGTPE]i|[mkMGTPE])|[eE]([+-]?\d+))?$/.exec(quantity.trim());
  if (!match) return undefined;
  const value = Number(match[1]) * (match[2] ? QUANTITY_SUFFIXES[match[2]]! : 10 ** Number(match[3] ?? 0));
  return Number.isFinite(value) ? value : undefined;
}

/** A quantity as people read sizes ("1664672Ki" → "1.7 GB"); one that is not a quantity as it was written. */
export function quantity(value: string): string {
  const parsed = quantityBytes(value);
  return parsed === undefined ? value : bytes(parsed);
}
