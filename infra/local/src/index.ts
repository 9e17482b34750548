export { DEFAULT_STATE_DIR, ensureDatabase, ensureInfra } from './infra.ts';
export type { Infra, InfraOptions, Source } from './infra.ts';
export { createSmtpSink, waitForMessage } from './smtp-sink.ts';
export type { SinkMessage, SmtpSink, SmtpSinkOptions } from './smtp-sink.ts';
export { LOCAL_S3_ACCESS_KEY, LOCAL_S3_REGION, LOCAL_S3_SECRET_KEY, startS3, type S3Handle } from './s3.ts';
export { freePort } from './net.ts';
export { startStack, STACK_SERVICES } from './stack.ts';
export type { Stack, StackOptions, StackService, SeedResult } from './stack.ts';
export { probeMysql, startMariadb } from './mariadb.ts';
