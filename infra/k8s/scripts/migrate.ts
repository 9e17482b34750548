/**
 * Applies one service's pending migrations, as the service does at start (`migrate` of @sigil/kit/db): the command
 * of the migrations Job's containers (infra/k8s/src/migrations.ts).
 *
 *   DATABASE_URL=postgres://… node infra/k8s/scripts/migrate.ts <service>
 */
import path from 'node:path';
import { migrate } from '@sigil/kit/db';
import { DATABASE_SERVICES } from '../src/workloads.ts';

const service = process.argv[2] ?? '';
const databaseUrl = process.env.DATABASE_URL;
if (!(DATABASE_SERVICES as readonly string[]).includes(service) || !databaseUrl) {
  console.error(`usage: DATABASE_URL=postgres://… node infra/k8s/scripts/migrate.ts <${DATABASE_SERVICES.join('|')}>`);
  process.exit(2);
}
const result = await migrate(databaseUrl, path.resolve(import.meta.dirname, '../../../prisma', service, 'migrations'));
console.log(`${service}: applied ${result.applied.length} (${result.applied.join(', ') || 'none'}), ${result.alreadyApplied.length} already applied`);
