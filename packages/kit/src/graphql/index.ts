export * from './subgraph.ts';
