import { CronExpressionParser } from 'cron-parser';

/** Custom formats of the resource schemas: cron5, iana-time-zone, regex. */
/**
 * Why `expression` is not an acceptable schedule, or undefined when it is: exactly five fields
 * (minute hour day-of-month month day-of-week) that cron-parser accepts. Jenkins-style `H` hashes
 * are refused (their value would depend on a seed; use the policy's `jitter` instead).
 */
export function cronProblem(expression: string): string | undefined {
  const fields = expression.trim().split(/\s+/).filter((f) => f !== '');
  if (fields.length !== 5) return 'is not a 5-field cron expression';
  if (fields.some((f) => /(?:^|[,/-])H/.test(f))) return 'is not a valid cron expression: H (hashed) values are not supported';
  try {
    CronExpressionParser.parse(fields.join(' '), { tz: 'UTC' });
  } catch (error) {
    return `is not a valid cron expression: ${(error as Error).message}`;
  }
  return undefined;
}

export function isCron5(expression: string): boolean {
  return cronProblem(expression) === undefined;
}

let timeZones: Set<string> | undefined;

/**
 * True for `UTC` and every zone of `Intl.supportedValuesOf('timeZone')`; also for other IANA names
 * the runtime resolves (links such as `Europe/Kiev`, `Etc/GMT+1`, `US/Pacific`) when written with
 * their capitalisation. Offsets (`+01:00`), lower-case names (`utc`) and unknown names are refused.
 */
export function isIanaTimeZone(name: string): boolean {
  timeZones ??= new Set([...Intl.supportedValuesOf('timeZone'), 'UTC']);
  if (timeZones.has(name)) return true;
  if (!/^[A-Z][A-Za-z0-9_+-]*(\/[A-Z0-9][A-Za-z0-9_+-]*)*$/.test(name)) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

export function regexProblem(source: string): string | undefined {
  try {
    new RegExp(source);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}
