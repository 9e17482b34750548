import type { PageRoute } from '../../app/routes.ts';

/** The templates pages (paths under /app). */
export const TEMPLATES_ROUTES: PageRoute[] = [];
