import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['{proto,prisma,packages,services,gateway,infra,apps,test}/**/test/**/*.test.ts', 'test/e2e/**/*.test.ts', 'test/contract/**/*.test.ts', 'test/integration/**/*.test.ts', 'test/reliability/**/*.test.ts'],
    exclude: ['**/node_modules/**', 'test/bench/**'],
    globalSetup: ['./test/setup/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Shared workers: a worker process runs file after file, so a file restores whatever global state it changes
    // (docs/architecture.md, test tiers). Their one failure seen (MariaDB's "out of order GTID" in a point-in-time
    // sandbox) was a replay that logged the original GTIDs into the source server, fixed in the mover.
    isolate: false,
    // Files share one Postgres server and one NATS; each uses its own database and durable names.
    fileParallelism: true,
    maxWorkers: 2,
    reporters: ['default', './test/setup/summary-reporter.ts'],
  },
});
