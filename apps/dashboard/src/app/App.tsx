import { AriaRouting, lazyPage, Loading, preloadLandingPage } from '@sigil/web-ui';
import { createBrowserRouter, Navigate, RouterProvider, useLocation } from 'react-router';
import { SessionProvider, useSession } from './session.tsx';
import { Shell } from './Shell.tsx';
import { ROUTES } from './routes.ts';

/** Signed-in pages: a signed-out visitor goes to sign-in and comes back after. */
function RequireSession() {
  const { session } = useSession();
  const location = useLocation();
  if (session === undefined) return <Loading what="your session" />;
  if (session === null) return <Navigate to={`/sign-in?next=${encodeURIComponent(location.pathname + location.search)}`} replace />;
  return <Shell />;
}

preloadLandingPage([...ROUTES.public, ...ROUTES.signedIn], '/app');

const router = createBrowserRouter(
  [
    {
      element: <AriaRouting />,
      children: [
        ...ROUTES.public.map(({ path, load }) => ({ path, element: lazyPage(load) })),
        { element: <RequireSession />, children: ROUTES.signedIn.map(({ path, load }) => ({ path, element: lazyPage(load) })) },
        { path: '*', element: lazyPage(() => import('../pages/NotFound.tsx')) },
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
