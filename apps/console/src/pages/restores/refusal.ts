/**
 * Where the wizard shows a refusal of `POST /restores` or `POST /sandboxes`. The console API answers `{ error }`
 * without a pointer, but its words name the field first (`ttl: ...`, `body.port: ...`, `confirm: ...`), so a 400
 * goes beside that field; a 422 is about the moment (outside every window, no backup before it) unless it is about
 * the tables or the database; a 403 says which thing the caller's role cannot do.
 */

/** The request members the wizard has a field for, by their name in the API's words. */
export const REQUEST_FIELDS = ['target', 'at', 'mode', 'ttl', 'expose', 'host', 'port', 'database', 'credentialsSecret', 'confirm', 'skipSafetyBackup', 'tables', 'reason'] as const;
export type RequestField = (typeof REQUEST_FIELDS)[number];

export const pointerOf = (field: RequestField) => `/body/${field}`;

export interface PlacedRefusal {
  /** The field to show it beside; undefined: above the start button. */
  field?: RequestField;
  detail: string;
}

/** `what` says what was asked in words ("restore in place", "open a sandbox"), for a 403. */
export function placeRefusal(status: number, detail: string, what: string): PlacedRefusal {
  if (status === 403) return { detail: `Your role cannot ${what}. ${detail}` };
  if (status === 400) {
    const named = namedField(detail);
    return named ? { field: named.field, detail: named.rest } : { detail };
  }
  if (status === 422) return { field: unrestorableField(detail), detail };
  return { detail };
}

/** `ttl: bad`, `body.ttl: bad`, `body.tables.0: bad`: the member named first and the words after it. */
function namedField(detail: string): { field: RequestField; rest: string } | undefined {
  const match = /^(?:body\.)?([A-Za-z]+)(?:\.[\w.]+)?: (.+)$/s.exec(detail);
  const field = REQUEST_FIELDS.find((f) => f === match?.[1]);
  return field && match ? { field, rest: match[2] as string } : undefined;
}

function unrestorableField(detail: string): RequestField {
  if (/table-level/i.test(detail)) return 'tables';
  if (/holds no database/i.test(detail)) return 'database';
  return 'at';
}
