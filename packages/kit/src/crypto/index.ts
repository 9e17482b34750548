export * from './sealed.ts';
export * from './credentials.ts';
