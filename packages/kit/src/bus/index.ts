export * from './types.ts';
export * from './nats.ts';
export * from './memory.ts';
export * from './outbox.ts';
export * from './consumer.ts';
export * from './outage.ts';
