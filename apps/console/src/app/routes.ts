import type { PageRoute } from '@sigil/web-ui';
import { HISTORY_ROUTES } from '../pages/history/routes.ts';
import { INSIGHT_ROUTES } from '../pages/insight/routes.ts';
import { RESTORES_ROUTES } from '../pages/restores/routes.ts';
import { SANDBOXES_ROUTES } from '../pages/sandboxes/routes.ts';
import { SETTINGS_ROUTES } from '../pages/settings/routes.ts';
import { TARGET_ROUTES } from '../pages/target/routes.ts';

/** Every page of the console (paths under /console); each area lists its own in pages/<area>/routes.ts. */
export const ROUTES: { public: PageRoute[]; signedIn: PageRoute[] } = {
  public: [{ path: '/sign-in', load: () => import('../pages/auth/SignIn.tsx') }],
  signedIn: [
    { path: '/', load: () => import('../pages/targets/TargetList.tsx') },
    ...TARGET_ROUTES,
    ...INSIGHT_ROUTES,
    ...RESTORES_ROUTES,
    ...SANDBOXES_ROUTES,
    ...HISTORY_ROUTES,
    ...SETTINGS_ROUTES,
  ],
};
