import { AppError } from '@sigil/kit/errors';

/**
 * A time given by a caller, refused unless it is a real time in the years 0001 to 9999. JavaScript dates reach
 * ±275760 years and PostgreSQL's `timestamptz` 4713 BC, so a time the schema let through (`since=99999999d`,
 * `-271821-04-20T00:00:00Z`) would otherwise fail in the database with a 500.
 */
export function inputTime(name: string, text: string, time: Date): Date {
  const year = time.getUTCFullYear();
  if (Number.isNaN(time.getTime())) throw new AppError('validation-failed', `${name}: "${text}" is not a valid time`);
  if (year < 1 || year > 9999) throw new AppError('validation-failed', `${name}: "${text}" is outside the years 0001 to 9999`);
  return time;
}
