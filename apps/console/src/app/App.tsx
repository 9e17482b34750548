import { AppName, AriaRouting, Loading, lazyPage, preloadLandingPage } from '@sigil/web-ui';
import { createBrowserRouter, Navigate, RouterProvider, useLocation } from 'react-router';
import { SessionProvider, useSession } from './session.tsx';
import { Shell } from './Shell.tsx';
import { ROUTES } from './routes.ts';

/** Signed-in pages: a caller without credentials goes to sign-in and comes back after. */
function RequireSession() {
  const { principal } = useSession();
  const location = useLocation();
  if (principal === undefined) return <Loading what="who you are" />;
  if (principal === null) return <Navigate to={`/sign-in?next=${encodeURIComponent(location.pathname + location.search)}`} replace />;
  return <Shell />;
}

const BASENAME = '/console';
preloadLandingPage([...ROUTES.public, ...ROUTES.signedIn], BASENAME);

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
  { basename: BASENAME },
);

export function App() {
  return (
    <AppName.Provider value="Strata">
      <SessionProvider>
        <RouterProvider router={router} />
      </SessionProvider>
    </AppName.Provider>
  );
}
