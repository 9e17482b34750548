import type { PageRoute } from '@sigil/web-ui';

/** What changed in a target: between two backups (/targets/:ns/:name/diff/:a/:b) and along its change log (/targets/:ns/:name/changes). */
export const INSIGHT_ROUTES: PageRoute[] = [
  { path: '/targets/:ns/:name/diff/:a/:b', load: () => import('./DiffPage.tsx') },
  { path: '/targets/:ns/:name/changes', load: () => import('./ChangesPage.tsx') },
];
