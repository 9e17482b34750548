import { z } from '@sigil/kit/config';

export const moverConfig = z.object({
  NATS_URL: z.string().min(1),
  /** Same key as the catalog's: jobs arrive sealed with it. */
  STRATA_SECRETS_KEY: z.string().min(44),
  /** Jobs one mover runs at once; the catalog's policy limits decide what is handed out. */
  MOVER_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(2),
  /** Change-log streams (point-in-time recovery) one mover runs at once, apart from backups and restores. */
  MOVER_STREAMS: z.coerce.number().int().min(1).max(1000).default(16),
  /** Where work files go (WAL and binlog segments, restores' downloads); the system's temp folder unless set. */
  MOVER_TEMP_DIR: z.string().min(1).optional(),
  CONSUMER_PREFIX: z.string().regex(/^[A-Za-z0-9_-]*$/).default(''),
  HOST: z.string().default('127.0.0.1'),
  /** Health endpoint only; 0 picks a free port. */
  PORT: z.coerce.number().int().min(0).max(65535).default(0),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

export type MoverConfig = z.infer<typeof moverConfig>;
