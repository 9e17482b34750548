import { createContext, useCallback, useContext, useEffect, useMemo, useRef, useState, type ReactNode } from 'react';
import { Provider as UrqlProvider } from 'urql';
import type { components } from '@sigil/proto/api/sigil';
import { createGraphqlClient } from '../api/graphql.ts';
import { storeMode, storedMode, type Mode } from '../api/mode.ts';
import { ApiError } from '../api/problem.ts';
import { createRestClient, unwrap, type RestClient } from '../api/rest.ts';

export type Session = components['schemas']['Session'];
export type Permission = components['schemas']['Permission'];

export interface SessionState {
  /** undefined while loading, null when signed out. */
  session: Session | null | undefined;
  mode: Mode;
  setMode(mode: Mode): void;
  rest: RestClient;
  /** Reads the session again (after sign-in, sign-up, accepting an invitation). */
  reload(): Promise<Session | null>;
  signOut(): Promise<void>;
  can(permission: Permission): boolean;
}

const SessionContext = createContext<SessionState | null>(null);

export function useSession(): SessionState {
  const state = useContext(SessionContext);
  if (!state) throw new Error('useSession outside <SessionProvider>');
  return state;
}

/** The signed-in session, the mode, and the API clients (one GraphQL cache per mode). */
export function SessionProvider({ children }: { children: ReactNode }) {
  const [mode, setModeState] = useState<Mode>(storedMode);
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const modeRef = useRef(mode);
  modeRef.current = mode;
  // Any 401 on a signed-in page ends the session here too: RequireSession sends the person to sign in.
  const signedOut = useCallback(() => setSession((current) => (current ? null : current)), []);
  const rest = useMemo(() => createRestClient(() => modeRef.current, signedOut), [signedOut]);
  const graphql = useMemo(() => createGraphqlClient(mode, signedOut), [mode, session?.organization.id, signedOut]);

  const reload = useCallback(async () => {
    try {
      const current = await unwrap(rest.GET('/v1/auth/session'));
      setSession(current);
      return current;
    } catch (error) {
      if (error instanceof ApiError && (error.problem.status === 401 || error.problem.status === 403)) {
        setSession(null);
        return null;
      }
      throw error;
    }
  }, [rest]);

  useEffect(() => {
    reload().catch(() => setSession(null));
  }, [reload]);

  const value = useMemo<SessionState>(
    () => ({
      session,
      mode,
      setMode(next) {
        storeMode(next);
        setModeState(next);
      },
      rest,
      reload,
      async signOut() {
        await unwrap(rest.POST('/v1/auth/sign-out')).catch(() => undefined);
        setSession(null);
      },
      can: (permission) => session?.permissions.includes(permission) ?? false,
    }),
    [session, mode, rest, reload],
  );
  return (
    <SessionContext.Provider value={value}>
      <UrqlProvider value={graphql}>{children}</UrqlProvider>
    </SessionContext.Provider>
  );
}
