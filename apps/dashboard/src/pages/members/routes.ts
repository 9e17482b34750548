import type { PageRoute } from '../../app/routes.ts';

/** The members pages (paths under /app). */
export const MEMBERS_ROUTES: PageRoute[] = [{ path: '/members', load: () => import('./Members.tsx') }];
