export * from './migrate.ts';
export * from './sql.ts';
export * from './listen.ts';
