export * from './catalog.ts';
export * from './entitlements.ts';
export * from './invoice.ts';
export * from './period.ts';
