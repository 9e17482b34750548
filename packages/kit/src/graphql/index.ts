export * from './subgraph.ts';
export * from './strata-subgraph.ts';
export * from './not-found.ts';
export * from './values.ts';
