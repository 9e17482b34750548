import type { PageRoute } from '@sigil/web-ui';

/** The settings pages (/settings). */
export const SETTINGS_ROUTES: PageRoute[] = [{ path: '/settings', load: () => import('./Settings.tsx') }];
