import { prismaClientOptions } from '@sigil/kit/db';
import { PrismaClient } from './generated/prisma/client.ts';

export type Db = InstanceType<typeof PrismaClient>;
export type Tx = Parameters<Parameters<Db['$transaction']>[0]>[0];
export type DbOrTx = Db | Tx;

export function createDb(databaseUrl: string): Db {
  return new PrismaClient(prismaClientOptions(databaseUrl));
}

/** Bumps the catalog version (every change listeners should see) and returns the new value. */
export async function bumpCatalogVersion(tx: DbOrTx): Promise<bigint> {
  const rows = await tx.$queryRawUnsafe<Array<{ version: bigint }>>(
    'UPDATE catalog_state SET version = version + 1 WHERE id = 1 RETURNING version',
  );
  return rows[0]?.version ?? 0n;
}

export async function catalogVersion(db: DbOrTx): Promise<bigint> {
  const rows = await db.$queryRawUnsafe<Array<{ version: bigint }>>('SELECT version FROM catalog_state WHERE id = 1');
  return rows[0]?.version ?? 0n;
}
