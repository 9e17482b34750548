export * from './migrate.ts';
export * from './sql.ts';
