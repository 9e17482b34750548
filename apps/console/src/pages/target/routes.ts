import type { PageRoute } from '@sigil/web-ui';

/** A target's page (/targets/:ns/:name). */
export const TARGET_ROUTES: PageRoute[] = [{ path: '/targets/:ns/:name', load: () => import('./TargetPage.tsx') }];
