import { ENVELOPE_STATUSES, SEAL_STATUSES, type EnvelopeStatus, type SealStatus } from './status.ts';

/** The list's filters as the URL holds them (`/envelopes?status=sent&q=ada`), so a reload or a shared link keeps them. */
export interface EnvelopeFilters {
  status?: EnvelopeStatus;
  seal?: SealStatus;
  template?: string;
  q?: string;
  /** Only envelopes waiting on a recipient for more than this many days. */
  waitingDays?: number;
}


const oneOf = <T extends string>(values: readonly T[], value: string | null): T | undefined => (values as readonly (string | null)[]).includes(value) ? (value as T) : undefined;

export function filtersFrom(params: URLSearchParams): EnvelopeFilters {
  const waiting = Number(params.get('waiting'));
  return {
    status: oneOf(ENVELOPE_STATUSES, params.get('status')),
    seal: oneOf(SEAL_STATUSES, params.get('seal')),
    template: params.get('template') || undefined,
    q: params.get('q')?.trim() || undefined,
    waitingDays: Number.isInteger(waiting) && waiting > 0 ? waiting : undefined,
  };
}

/** The URL of `filters` (empty ones left out); a changed filter starts again at the first page. */
export function searchOf(filters: EnvelopeFilters, after?: string): string {
  const params = new URLSearchParams();
  if (filters.status) params.set('status', filters.status);
  if (filters.seal) params.set('seal', filters.seal);
  if (filters.template) params.set('template', filters.template);
  if (filters.q) params.set('q', filters.q);
  if (filters.waitingDays) params.set('waiting', String(filters.waitingDays));
  if (after) params.set('after', after);
  const search = params.toString();
  return search ? `?${search}` : '';
}

export function hasFilters(filters: EnvelopeFilters): boolean {
  return Object.values(filters).some((value) => value !== undefined);
}
