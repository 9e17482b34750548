import type { PageRoute } from '../../app/routes.ts';

/** The settings pages (paths under /app). */
export const SETTINGS_ROUTES: PageRoute[] = [
  { path: '/settings/billing', load: () => import('./Billing.tsx') },
  { path: '/settings/sso', load: () => import('./Sso.tsx') },
  { path: '/settings/scim', load: () => import('./Scim.tsx') },
  { path: '/settings/branding', load: () => import('./Branding.tsx') },
];
