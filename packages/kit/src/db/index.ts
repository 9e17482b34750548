export * from './migrate.ts';
export * from './sql.ts';
export * from './listen.ts';
export * from './exclusive.ts';
export * from './prisma.ts';
export * from './storable-text.ts';
export * from './deadlock-retry.ts';
