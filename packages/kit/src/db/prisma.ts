import { PrismaPg } from '@prisma/adapter-pg';

/**
 * Every service's interactive transactions wait up to 15 s to start and may last 20 s. Prisma's own defaults (2 s and
 * 5 s) turned ordinary short transactions into 503s as soon as the machine was busy: the end-to-end suite on two
 * replicas saw a signature's transaction expire after 5.4 s while ten were submitted at once. A transaction holding
 * row locks still ends within 20 s; the few that do slow work pass a longer `timeout` of their own.
 */
export const TRANSACTION_DEFAULTS = { maxWait: 15_000, timeout: 20_000 } as const;

/** The options every service's PrismaClient is built with: the pg driver adapter (a pool of `max`) and the defaults above. */
export function prismaClientOptions(databaseUrl: string, max = 10) {
  return { adapter: new PrismaPg({ connectionString: databaseUrl, max }), transactionOptions: TRANSACTION_DEFAULTS };
}
