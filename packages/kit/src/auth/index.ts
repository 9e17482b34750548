export * from './principal.ts';
export * from './strata-principal.ts';
export * from './permissions.ts';
export * from './verified-tokens.ts';
export * from './service-caller.ts';
