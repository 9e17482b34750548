import { pino, type Logger } from 'pino';

export type { Logger };

/** Headers that carry a credential somewhere in the platform; a log line that quotes headers shows none of them. */
export const CREDENTIAL_HEADERS = [
  'authorization',
  'x-api-key',
  'cookie',
  'set-cookie',
  'x-sigil-principal',
  'x-strata-principal',
  'cf-access-jwt-assertion',
  'cf-access-token',
] as const;

/** The level comes from the caller (its configuration's `LOG_LEVEL`): the kit never reads the environment itself. */
export function createLogger(service: string, level: string): Logger {
  return pino({
    name: service,
    level,
    redact: {
      paths: CREDENTIAL_HEADERS.flatMap((header) => [`req.headers["${header}"]`, `res.headers["${header}"]`, `headers["${header}"]`]),
      censor: '[redacted]',
    },
  });
}
