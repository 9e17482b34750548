import type { PageRoute } from '../../app/routes.ts';

/** The templates pages (paths under /app): the list, and a template with its field editor, versions and preview. */
export const TEMPLATES_ROUTES: PageRoute[] = [
  { path: '/templates', load: () => import('./TemplatesList.tsx') },
  { path: '/templates/:id', load: () => import('./TemplatePage.tsx') },
];
