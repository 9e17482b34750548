import type { PageRoute } from '@sigil/web-ui';

/** The sandboxes pages (/sandboxes, /sandboxes/:name). */
export const SANDBOXES_ROUTES: PageRoute[] = [
  { path: '/sandboxes', load: () => import('./SandboxList.tsx') },
  { path: '/sandboxes/:name', load: () => import('./SandboxDetail.tsx') },
];
