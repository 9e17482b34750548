import type { PageRoute } from '@sigil/web-ui';

/** The restores pages (/restores, /restores/:ns/:name, /restore (the wizard)). */
export const RESTORES_ROUTES: PageRoute[] = [
  { path: '/restore', load: () => import('./RestoreWizard.tsx') },
  { path: '/restores', load: () => import('./RestoreList.tsx') },
  { path: '/restores/:ns/:name', load: () => import('./RestoreDetail.tsx') },
];
