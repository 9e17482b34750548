import type { PageRoute } from '../../app/routes.ts';

/** The developers pages (paths under /app). */
export const DEVELOPERS_ROUTES: PageRoute[] = [];
