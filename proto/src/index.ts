export * from './product.ts';
export * from './auth.ts';
export * from './routes.ts';
export * from './openapi.ts';
export * from './openapi-check.ts';
export * from './events.ts';
export * from './ajv.ts';
