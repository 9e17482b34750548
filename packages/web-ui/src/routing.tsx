import { lazy, Suspense, type ComponentType } from 'react';
import { RouterProvider as AriaRouterProvider } from 'react-aria-components';
import { matchPath, Outlet, ScrollRestoration, useHref, useNavigate } from 'react-router';
import { Loading } from './components/Page.tsx';

/** A page of an app: its path under the app's base and its chunk (loaded when first opened). */
export interface PageRoute {
  path: string;
  load: () => Promise<{ default: ComponentType }>;
}

/** Each page is its own chunk: the first load carries the shell and the page it opens, nothing else. */
export function lazyPage(load: PageRoute['load']) {
  const Component = lazy(load);
  return (
    <Suspense fallback={<Loading what="the page" />}>
      <Component />
    </Suspense>
  );
}

/**
 * react-aria's links and buttons navigate through the router (client-side, keeping the session and the cache); a new
 * page opens at its top (back and forward return to where the page was). The root element of an app's routes.
 */
export function AriaRouting() {
  const navigate = useNavigate();
  return (
    <AriaRouterProvider navigate={(to) => void navigate(to)} useHref={useHref}>
      <ScrollRestoration />
      <Outlet />
    </AriaRouterProvider>
  );
}

/**
 * Starts downloading the chunk of the page a first load opens now, beside the session check, instead of after it
 * (the signed-in pages render only once the session is known; the import is the same module, so lazy() finds it
 * loaded).
 */
export function preloadLandingPage(routes: readonly PageRoute[], basename: string): void {
  const here = window.location.pathname.startsWith(basename) ? window.location.pathname.slice(basename.length) || '/' : '/';
  const landing = routes.find((route) => matchPath(route.path, here));
  void landing?.load().catch(() => undefined);
}
