import { useState } from 'react';
import type { components } from '@sigil/proto/api/strata';
import { unwrap } from '../../api/rest.ts';
import { useSession } from '../../app/session.tsx';
import { useRead } from '../../api/useRead.ts';

export type RestRestore = components['schemas']['Restore'];

/**
 * What GraphQL's Restore does not carry yet (its plan, source, destination, checks and safety backup), read from the
 * console API (`GET /restores`, `GET /restores/{ns}/{name}`). `reload` reads again (on the restore's events).
 */
export function useRestRestore(namespace: string, name: string) {
  const { rest } = useSession();
  const [version, setVersion] = useState(0);
  const read = useRead(() => unwrap(rest.GET('/restores/{ns}/{name}', { params: { path: { ns: namespace, name } } })).then((d) => d.restore), [namespace, name, version]);
  return { ...read, reload: () => setVersion((v) => v + 1) };
}

export function useRestRestores(limit: number) {
  const { rest } = useSession();
  const [version, setVersion] = useState(0);
  const read = useRead(() => unwrap(rest.GET('/restores', { params: { query: { limit } } })).then((d) => d.restores ?? []), [limit, version]);
  return { ...read, reload: () => setVersion((v) => v + 1) };
}
