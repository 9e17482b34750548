import type { components } from '@sigil/proto/api/strata';
import type { RequestField } from './refusal.ts';

export type RestoreRequest = components['schemas']['RestoreRequest'];
export type RestoreMode = NonNullable<RestoreRequest['mode']>;

/** What the wizard's destination step holds (text as typed; only the chosen mode's part is sent). */
export interface DestinationChoice {
  mode: RestoreMode;
  /** Sandbox: how long it lives (blank: the policy's default), and whether the tunnel exposes it. */
  ttl: string;
  expose: boolean;
  /** New database: where, under which name, as which admin. */
  host: string;
  /** NaN while blank (the engine's default port). */
  port: number;
  database: string;
  credentialsSecret: string;
  /** In place: the target's name typed again, and whether to skip the safety backup. */
  confirm: string;
  skipSafetyBackup: boolean;
  /** Download: the database to download, when the backup holds several. */
  downloadDatabase: string;
}

export const EMPTY_DESTINATION: Omit<DestinationChoice, 'mode'> = {
  ttl: '',
  expose: false,
  host: '',
  port: Number.NaN,
  database: '',
  credentialsSecret: '',
  confirm: '',
  skipSafetyBackup: false,
  downloadDatabase: '',
};

/** What the caller's role cannot do, in the words a refusal (403) uses. */
export const MODE_ACTION: Record<RestoreMode, string> = {
  sandbox: 'open a sandbox',
  new: 'restore into a new database',
  'in-place': 'restore in place',
  download: 'download a backup',
};

/**
 * The request members the wizard shows a field for with this mode (a refusal about one goes beside it; about any
 * other, above the start button). The download's database is a field only when the backup holds several.
 */
export function shownFieldsOf(mode: RestoreMode, severalDatabases: boolean): RequestField[] {
  const own: Record<RestoreMode, RequestField[]> = {
    sandbox: ['ttl', 'expose', 'tables'],
    new: ['host', 'port', 'database', 'credentialsSecret', 'tables'],
    'in-place': ['confirm', 'credentialsSecret', 'skipSafetyBackup', 'tables'],
    download: severalDatabases ? ['database'] : [],
  };
  return ['target', 'at', ...own[mode], 'reason'];
}

/** Sandboxes are the sandbox service's (`POST /sandboxes`: the answer names the sandbox); the rest the catalog's. */
export type RestoreCall = { path: '/sandboxes'; body: RestoreRequest & { mode: 'sandbox' } } | { path: '/restores'; body: RestoreRequest };

/**
 * The request the wizard sends: the target, the moment (`latest` or RFC 3339), the tables when not all, the reason,
 * and the chosen mode's own members; blank text is left out so the API's defaults apply.
 */
export function restoreCallOf(input: { target: string; at: string; destination: DestinationChoice; tables: readonly string[] | 'all'; reason: string }): RestoreCall {
  const { destination: d } = input;
  const text = (value: string) => value.trim() || undefined;
  const common = compact({
    target: input.target,
    at: input.at,
    mode: d.mode,
    tables: input.tables === 'all' || d.mode === 'download' ? undefined : [...input.tables],
    reason: text(input.reason),
  });
  const own: Record<RestoreMode, Partial<RestoreRequest>> = {
    sandbox: { ttl: text(d.ttl), expose: d.expose || undefined },
    new: { host: text(d.host), port: Number.isNaN(d.port) ? undefined : d.port, database: text(d.database), credentialsSecret: text(d.credentialsSecret) },
    'in-place': { confirm: d.confirm, credentialsSecret: text(d.credentialsSecret), skipSafetyBackup: d.skipSafetyBackup || undefined },
    download: { database: text(d.downloadDatabase) },
  };
  const body = { ...common, ...compact(own[d.mode]) };
  return d.mode === 'sandbox' ? { path: '/sandboxes', body: { ...body, mode: 'sandbox' } } : { path: '/restores', body };
}

function compact<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
