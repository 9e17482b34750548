import type { PageRoute } from '../../app/routes.ts';

/** The developers pages (paths under /app). */
export const DEVELOPERS_ROUTES: PageRoute[] = [
  { path: '/developers/api-keys', load: () => import('./ApiKeys.tsx') },
  { path: '/developers/webhooks', load: () => import('./Webhooks.tsx') },
  { path: '/developers/webhooks/:id', load: () => import('./WebhookEndpoint.tsx') },
  { path: '/developers/api', load: () => import('./ApiReference.tsx') },
];
