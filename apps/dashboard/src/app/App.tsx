import { lazy, Suspense, type ComponentType } from 'react';
import { RouterProvider as AriaRouterProvider } from 'react-aria-components';
import { createBrowserRouter, matchPath, Navigate, Outlet, RouterProvider, ScrollRestoration, useHref, useLocation, useNavigate } from 'react-router';
import { Loading } from '../components/Page.tsx';
import { SessionProvider, useSession } from './session.tsx';
import { Shell } from './Shell.tsx';
import { ROUTES } from './routes.ts';

/** Each page is its own chunk: the first load carries the shell and the page it opens, nothing else. */
function page(load: () => Promise<{ default: ComponentType }>) {
  const Component = lazy(load);
  return (
    <Suspense fallback={<Loading what="the page" />}>
      <Component />
    </Suspense>
  );
}

/** Signed-in pages: a signed-out visitor goes to sign-in and comes back after. */
function RequireSession() {
  const { session } = useSession();
  const location = useLocation();
  if (session === undefined) return <Loading what="your session" />;
  if (session === null) return <Navigate to={`/sign-in?next=${encodeURIComponent(location.pathname + location.search)}`} replace />;
  return <Shell />;
}

/**
 * react-aria's links and buttons navigate through the router (client-side, keeping the session and the cache); a new
 * page opens at its top (back and forward return to where the page was).
 */
function AriaRouting() {
  const navigate = useNavigate();
  return (
    <AriaRouterProvider navigate={(to) => void navigate(to)} useHref={useHref}>
      <ScrollRestoration />
      <Outlet />
    </AriaRouterProvider>
  );
}

/**
 * The chunk of the page a first load opens starts downloading now, beside the session check, instead of after it
 * (RequireSession renders the page only once the session is known; the import is the same module, so lazy() finds
 * it loaded).
 */
function preloadLandingPage(): void {
  const here = window.location.pathname.replace(/^\/app(?=\/|$)/, '') || '/';
  const landing = [...ROUTES.public, ...ROUTES.signedIn].find((route) => matchPath(route.path, here));
  void landing?.load().catch(() => undefined);
}
preloadLandingPage();

const router = createBrowserRouter(
  [
    {
      element: <AriaRouting />,
      children: [
        ...ROUTES.public.map(({ path, load }) => ({ path, element: page(load) })),
        { element: <RequireSession />, children: ROUTES.signedIn.map(({ path, load }) => ({ path, element: page(load) })) },
        { path: '*', element: page(() => import('../pages/NotFound.tsx')) },
      ],
    },
  ],
  { basename: '/app' },
);

export function App() {
  return (
    <SessionProvider>
      <RouterProvider router={router} />
    </SessionProvider>
  );
}
