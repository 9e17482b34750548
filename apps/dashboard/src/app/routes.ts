import type { PageRoute } from '@sigil/web-ui';
import { DEVELOPERS_ROUTES } from '../pages/developers/routes.ts';
import { ENVELOPES_ROUTES } from '../pages/envelopes/routes.ts';
import { LINKS_ROUTES } from '../pages/links/routes.ts';
import { MEMBERS_ROUTES } from '../pages/members/routes.ts';
import { SETTINGS_ROUTES } from '../pages/settings/routes.ts';
import { TEMPLATES_ROUTES } from '../pages/templates/routes.ts';

export type { PageRoute };

/** Every page; each area lists its own in pages/<area>/routes.ts. The navigation (Shell.tsx) links to these paths. */
export const ROUTES: { public: PageRoute[]; signedIn: PageRoute[] } = {
  public: [
    { path: '/sign-in', load: () => import('../pages/auth/SignIn.tsx') },
    { path: '/sign-up', load: () => import('../pages/auth/SignUp.tsx') },
    { path: '/accept-invitation', load: () => import('../pages/auth/AcceptInvitation.tsx') },
  ],
  signedIn: [
    { path: '/', load: () => import('../pages/home/Home.tsx') },
    ...ENVELOPES_ROUTES,
    ...LINKS_ROUTES,
    ...TEMPLATES_ROUTES,
    ...DEVELOPERS_ROUTES,
    ...MEMBERS_ROUTES,
    ...SETTINGS_ROUTES,
  ],
};
