import { prismaClientOptions } from '@sigil/kit/db';
import { PrismaClient } from './generated/prisma/client.ts';

export type Db = InstanceType<typeof PrismaClient>;
export type Tx = Parameters<Parameters<Db['$transaction']>[0]>[0];

export function createDb(databaseUrl: string): Db {
  return new PrismaClient(prismaClientOptions(databaseUrl));
}
