import type { PageRoute } from '../../app/routes.ts';

/** The envelopes pages (paths under /app). `new` comes before `:id`, though the router ranks static segments first. */
export const ENVELOPES_ROUTES: PageRoute[] = [
  { path: '/envelopes', load: () => import('./EnvelopeList.tsx') },
  { path: '/envelopes/new', load: () => import('./SendEnvelope.tsx') },
  { path: '/envelopes/:id', load: () => import('./EnvelopePage.tsx') },
];
