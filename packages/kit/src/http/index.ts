export * from './problem.ts';
export * from './request-id.ts';
export * from './health.ts';
export * from './server.ts';
export * from './client-address.ts';
export * from './upgrade.ts';
