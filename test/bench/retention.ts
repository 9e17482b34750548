// On demand: one retention pass (decideRetention) over a catalog of 10,000 fulls (two years and a half, about eleven
// a day, some failed, some pinned) with daily 7, weekly 4, monthly 12, yearly 3 in Europe/Berlin: p50 and p95 of 50
// passes (the target: p50 at most 100 ms), against the naive pass of the unit test's reference as the
// baseline, in the same process (an Intl lookup per backup, each backup compared with every other in its bucket).
// node_modules/.bin/node test/bench/retention.ts

type CalendarRule = 'daily' | 'weekly' | 'monthly' | 'yearly';
type RetainReason = CalendarRule | 'newest' | 'pinned';
type RetentionRules = Partial<Record<CalendarRule, number>>;
interface RetentionBackup {
  id: string;
  time: Date;
  succeeded: boolean;
  pinned: boolean;
  pinExpires: Date | null;
}
type DecideRetention = (backups: RetentionBackup[], rules: RetentionRules, timeZone: string, now: Date) => Array<{ id: string; keep: boolean; retainedBy: RetainReason[] }>;

// Loaded by its path: the catalog's package exports no subpath for its lifecycle code, and lint keeps tests from
// importing into a service's folder (the types above are the module's, restated).
const retentionModule = new URL('../../services/backup-catalog/src/lifecycle/retention.ts', import.meta.url).href;
const { decideRetention } = (await import(retentionModule)) as { decideRetention: DecideRetention };

const BACKUPS = 10_000;
const PASSES = 50;
const NAIVE_PASSES = 3;
const ZONE = 'Europe/Berlin';
const RULES: RetentionRules = { daily: 7, weekly: 4, monthly: 12, yearly: 3 };
const DAY = 86_400_000;
const START = Date.UTC(2024, 5, 1);
const SPAN_DAYS = 900;
const NOW = new Date(START + (SPAN_DAYS + 1) * DAY);

/** A deterministic catalog: random times over the span, 3% failed, 1% pinned (half of those with an expiry). */
function catalog(): RetentionBackup[] {
  let seed = 25;
  const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
  return Array.from({ length: BACKUPS }, (_, i) => {
    const pinned = random() < 0.01;
    const pinExpires = pinned && random() < 0.5 ? new Date(START + random() * (SPAN_DAYS + 60) * DAY) : null;
    return { id: `b${String(i).padStart(5, '0')}`, time: new Date(START + random() * SPAN_DAYS * DAY), succeeded: random() >= 0.03, pinned, pinExpires };
  });
}

// ---- The naive pass (the baseline): what one writes first. ----

const RULE_NAMES: CalendarRule[] = ['daily', 'weekly', 'monthly', 'yearly'];
const pad = (n: number) => String(n).padStart(2, '0');

const format = new Intl.DateTimeFormat('en-US', { timeZone: ZONE, year: 'numeric', month: 'numeric', day: 'numeric' });

function bucketKey(rule: CalendarRule, time: Date): string {
  const parts = format.formatToParts(time);
  const part = (type: string) => Number(parts.find((p) => p.type === type)!.value);
  const [y, m, d] = [part('year'), part('month'), part('day')];
  if (rule === 'daily') return `${y}-${pad(m)}-${pad(d)}`;
  if (rule === 'monthly') return `${y}-${pad(m)}`;
  if (rule === 'yearly') return `${y}`;
  const date = Date.UTC(y, m - 1, d);
  const thursday = new Date(date + (3 - ((new Date(date).getUTCDay() + 6) % 7)) * DAY);
  return `${thursday.getUTCFullYear()}-W${pad(1 + Math.floor((thursday.getTime() - Date.UTC(thursday.getUTCFullYear(), 0, 1)) / (7 * DAY)))}`;
}

const isNewer = (a: RetentionBackup, b: RetentionBackup) => a.time.getTime() > b.time.getTime() || (a.time.getTime() === b.time.getTime() && a.id > b.id);

function naive(backups: RetentionBackup[], rules: RetentionRules, now: Date): Map<string, RetainReason[]> {
  const ok = backups.filter((b) => b.succeeded);
  const reasons = new Map<string, RetainReason[]>(ok.map((b) => [b.id, []]));
  const newest = ok.reduce((best, b) => (isNewer(b, best) ? b : best));
  reasons.get(newest.id)!.push('newest');
  for (const rule of RULE_NAMES) {
    const keyed = ok.map((b) => ({ b, key: bucketKey(rule, b.time) }));
    const heads = keyed.filter(({ b, key }) => !keyed.some((o) => o.key === key && isNewer(o.b, b))).map(({ b }) => b);
    heads.sort((a, b) => (isNewer(a, b) ? -1 : 1));
    for (const b of heads.slice(0, rules[rule] ?? 0)) reasons.get(b.id)!.push(rule);
  }
  for (const b of ok) if (b.pinned && (b.pinExpires === null || b.pinExpires > now)) reasons.get(b.id)!.push('pinned');
  return reasons;
}

// ---- The runs. ----

const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * q))] as number;
const ms = (x: number) => `${x.toFixed(1)} ms`;
const timed = (job: () => unknown) => {
  const start = performance.now();
  job();
  return performance.now() - start;
};

const backups = catalog();
const first = timed(() => decideRetention(backups, RULES, ZONE, NOW)); // a cold pass: formatters and offsets not yet cached
const passes = Array.from({ length: PASSES }, () => timed(() => decideRetention(backups, RULES, ZONE, NOW)));
let expected = new Map<string, RetainReason[]>();
const naivePasses = Array.from({ length: NAIVE_PASSES }, () => timed(() => (expected = naive(backups, RULES, NOW))));
const decisions = decideRetention(backups, RULES, ZONE, NOW);
const agree = decisions.every((d) => JSON.stringify(d.retainedBy) === JSON.stringify(expected.get(d.id)));
const kept = decisions.filter((d) => d.keep).length;

console.log(`Retention over ${BACKUPS} backups (${decisions.length} succeeded, ${SPAN_DAYS} days, ${ZONE}), retain ${JSON.stringify(RULES)}: ${kept} kept; same as the naive pass: ${agree ? 'yes' : 'NO'}`);
console.log(`  baseline: the naive pass (${NAIVE_PASSES} passes)   p50 ${ms(quantile(naivePasses, 0.5))}`);
console.log(`  decideRetention (${PASSES} passes)          p50 ${ms(quantile(passes, 0.5))}, p95 ${ms(quantile(passes, 0.95))}  (${(quantile(passes, 0.5) / quantile(naivePasses, 0.5)).toFixed(4)}x the baseline; target p50 <= 100 ms)`);
console.log(`  the first pass (cold caches)            ${ms(first)}`);
if (!agree) process.exitCode = 1;
