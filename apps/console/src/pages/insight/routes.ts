import type { PageRoute } from '@sigil/web-ui';

/**
 * What changed in a target: between two backups (/targets/:ns/:name/diff/:a/:b), along its change log
 * (/targets/:ns/:name/changes), and a segment's masked sample rows (/targets/:ns/:name/segments/:segment/previews).
 */
export const INSIGHT_ROUTES: PageRoute[] = [
  { path: '/targets/:ns/:name/diff/:a/:b', load: () => import('./DiffPage.tsx') },
  { path: '/targets/:ns/:name/changes', load: () => import('./ChangesPage.tsx') },
  { path: '/targets/:ns/:name/segments/:segment/previews', load: () => import('./PreviewsPage.tsx') },
];
