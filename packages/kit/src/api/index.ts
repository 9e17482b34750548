export * from './contract-app.ts';
export * from './operation-types.ts';
export * from './sigil-app.ts';
export * from './validation.ts';
export * from './media-types.ts';
export * from './idempotency.ts';
export * from './openapi-backend.ts';
export * from './multipart.ts';
