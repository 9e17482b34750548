export * from './messages.ts';
export * from './mailer.ts';
