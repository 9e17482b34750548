import type { PageRoute } from '@sigil/web-ui';

/** Every page of the console (paths under /console). The navigation (Shell.tsx) links to these paths. */
export const ROUTES: { public: PageRoute[]; signedIn: PageRoute[] } = {
  public: [{ path: '/sign-in', load: () => import('../pages/auth/SignIn.tsx') }],
  signedIn: [
    { path: '/', load: () => import('../pages/targets/TargetList.tsx') },
  ],
};
