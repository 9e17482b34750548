import type { PageRoute } from '../../app/routes.ts';

/** The signing-links page (paths under /app). */
export const LINKS_ROUTES: PageRoute[] = [{ path: '/signing-links', load: () => import('./SigningLinks.tsx') }];
