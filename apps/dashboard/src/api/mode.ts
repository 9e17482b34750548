/** Test or live: what every read and write of the dashboard acts in (the gateway's `sigil-mode` header). */
export type Mode = 'test' | 'live';

const STORAGE_KEY = 'sigil.dashboard.mode';

export function storedMode(): Mode {
  try {
    return localStorage.getItem(STORAGE_KEY) === 'live' ? 'live' : 'test';
  } catch {
    return 'test';
  }
}

export function storeMode(mode: Mode): void {
  try {
    localStorage.setItem(STORAGE_KEY, mode);
  } catch {
    // Private windows may refuse storage: the mode then lasts for this page only.
  }
}

/** The headers that put a request in `mode` (live is the gateway's default for sessions). */
export function modeHeaders(mode: Mode): Record<string, string> {
  return mode === 'test' ? { 'sigil-mode': 'test' } : {};
}
