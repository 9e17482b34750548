export * from './messages.ts';
export * from './mailer.ts';
export * from './sms.ts';
export { brandedName, POWERED_BY, type MailBranding } from './branding.ts';
