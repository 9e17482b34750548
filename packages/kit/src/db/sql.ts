/**
 * The slice of a Prisma client (or interactive transaction) that the platform tables need.
 * Kit code talks SQL through it so every service's own generated client fits.
 */
export interface SqlClient {
  $executeRawUnsafe(query: string, ...values: unknown[]): Promise<number>;
  $queryRawUnsafe<T = unknown>(query: string, ...values: unknown[]): Promise<T>;
}

export interface TransactionalSqlClient<Tx extends SqlClient = SqlClient> extends SqlClient {
  $transaction<R>(fn: (tx: Tx) => Promise<R>, options?: { timeout?: number }): Promise<R>;
}
