export * from './nats.ts';
export * from './outbox.ts';
export * from './consumer.ts';
