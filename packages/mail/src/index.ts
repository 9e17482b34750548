export * from './messages.ts';
export * from './mailer.ts';
export * from './sms.ts';
