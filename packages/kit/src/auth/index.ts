export * from './principal.ts';
export * from './strata-principal.ts';
export * from './permissions.ts';
