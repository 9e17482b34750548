/**
 * The whole kit in one import, kept while the services move to the subpaths (`@sigil/kit/http`, `/api`, `/bus`, …),
 * which load only what a process uses.
 */
export * from './errors.ts';
export * from './ids.ts';
export * from './config.ts';
export * from './log.ts';
export * from './pagination.ts';
export * from './auth/index.ts';
export * from './crypto/index.ts';
export * from './db/index.ts';
export * from './http/index.ts';
export * from './api/index.ts';
export * from './bus/index.ts';
export * from './graphql/index.ts';
