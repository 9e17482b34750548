import type { PageRoute } from '../../app/routes.ts';

/** The settings pages (paths under /app). */
export const SETTINGS_ROUTES: PageRoute[] = [];
