import type { PageRoute } from '../../app/routes.ts';

/** The envelopes pages (paths under /app). */
export const ENVELOPES_ROUTES: PageRoute[] = [];
