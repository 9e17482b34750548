import type { PageRoute } from '@sigil/web-ui';

/** The history pages (/activity, /audit). */
export const HISTORY_ROUTES: PageRoute[] = [
  { path: '/activity', load: () => import('./Activity.tsx') },
  { path: '/audit', load: () => import('./Audit.tsx') },
];
