import { prismaClientOptions } from '@sigil/kit/db';
import { PrismaClient } from './generated/prisma/client.ts';

export type Db = InstanceType<typeof PrismaClient>;
export type Tx = Parameters<Parameters<Db['$transaction']>[0]>[0];
export type DbOrTx = Db | Tx;
export type SandboxRow = NonNullable<Awaited<ReturnType<Db['sandbox']['findUnique']>>>;

export function createDb(databaseUrl: string): Db {
  return new PrismaClient(prismaClientOptions(databaseUrl));
}
