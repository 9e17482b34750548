import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import { Provider as UrqlProvider } from 'urql';
import { ApiError } from '@sigil/web-ui';
import { createGraphqlClient } from '../api/graphql.ts';
import { createRestClient, unwrap, type RestClient } from '../api/rest.ts';
import { roleAtLeast, type Principal, type Role } from './roles.ts';

export interface SessionState {
  /** undefined while loading, null when the access proxy's credentials are missing or refused. */
  principal: Principal | null | undefined;
  /** The console's external URL and the service version (`GET /whoami`). */
  version: string;
  rest: RestClient;
  /** Reads the caller again (after a dev sign-in). */
  reload(): Promise<Principal | null>;
  /** Whether the caller's role reaches `role`: controls a role may not use are not shown. */
  can(role: Role): boolean;
  /** The local stack's dev issuer answers: the console signs in (and out) by itself, with a role picker. */
  devSignIn: boolean;
  signOut(): Promise<void>;
}

/** The local stack's stand-in for the access proxy (gateway/src/dev-issuer.ts). */
export const DEV_KEYS = '/api/dev/jwks.json';
export const DEV_SESSION = '/api/dev/session';

const SessionContext = createContext<SessionState | null>(null);

export function useSession(): SessionState {
  const state = useContext(SessionContext);
  if (!state) throw new Error('useSession outside <SessionProvider>');
  return state;
}

/** The caller as the console API sees it (`GET /api/v1/whoami`), and the API clients. */
export function SessionProvider({ children }: { children: ReactNode }) {
  const [principal, setPrincipal] = useState<Principal | null | undefined>(undefined);
  const [version, setVersion] = useState('');
  const [devSignIn, setDevSignIn] = useState(false);
  const rest = useMemo(() => createRestClient(), []);
  // A new cache per caller: another role may see other targets.
  const graphql = useMemo(() => createGraphqlClient(), [principal?.id, principal?.role]);

  const reload = useCallback(async () => {
    try {
      const whoami = await unwrap(rest.GET('/whoami'));
      setPrincipal(whoami.principal);
      setVersion(whoami.version);
      return whoami.principal;
    } catch (error) {
      if (error instanceof ApiError && (error.problem.status === 401 || error.problem.status === 403)) {
        setPrincipal(null);
        return null;
      }
      throw error;
    }
  }, [rest]);

  useEffect(() => {
    reload().catch(() => setPrincipal(null));
    // Production has an access proxy in front and no /api/dev (404): sign-in and sign-out are the proxy's.
    fetch(DEV_KEYS, { credentials: 'same-origin' }).then((res) => setDevSignIn(res.ok), () => setDevSignIn(false));
  }, [reload]);

  const value = useMemo<SessionState>(
    () => ({
      principal,
      version,
      rest,
      reload,
      can: (role) => roleAtLeast(principal?.role, role),
      devSignIn,
      async signOut() {
        await fetch(DEV_SESSION, { method: 'DELETE', credentials: 'same-origin' });
        setPrincipal(null);
      },
    }),
    [principal, version, rest, reload, devSignIn],
  );
  return (
    <SessionContext.Provider value={value}>
      <UrqlProvider value={graphql}>{children}</UrqlProvider>
    </SessionContext.Provider>
  );
}
