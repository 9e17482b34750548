import { useEffect } from 'react';
import { useQuery } from 'urql';
import { FormError, Loading } from '@sigil/web-ui';
import { useStrataEvents } from '../../api/events.ts';
import { RestoreProgress } from './RestoreProgress.tsx';
import { RestoreQuery, SandboxFollowQuery, type RestoreView } from './restore-queries.ts';

const ENDED = ['Succeeded', 'Failed'];
const SANDBOX_SETTLED = ['Ready', 'Failed', 'Expired', 'Deleting'];
/** The event stream drives the updates; this slow read only covers a stream that is down (it reconnects by itself). */
const FALLBACK_READ_MS = 5000;

/** A restore's progress, live: its events (kind restore, by name), until it ends. */
export function FollowRestore({ namespace, name }: { namespace: string; name: string }) {
  const [{ data, error, fetching }, refetch] = useQuery({ query: RestoreQuery, variables: { namespace, name } });
  const restore = data?.strataRestore;
  const reload = () => refetch({ requestPolicy: 'network-only' });
  useStrataEvents(reload, { kinds: ['restore'], filter: (event) => event.name === name });
  useFallbackRead(reload, !restore || !ENDED.includes(restore.phase));
  if (!restore) return fetching ? <Loading what="the restore" /> : <FormError error={error ?? `Restore ${namespace}/${name} cannot be read.`} />;
  return <RestoreProgress restore={restore} />;
}

/**
 * A sandbox being opened: the restore that fills it (by the sandbox's `restore`), then the sandbox itself until it
 * is Ready (its post-restore SQL ran) or failed. Live: the events of both.
 */
export function FollowSandbox({ name }: { name: string }) {
  const [{ data, error }, refetchSandbox] = useQuery({ query: SandboxFollowQuery, variables: { name } });
  const sandbox = data?.strataSandbox;
  const restoreName = sandbox?.restore ?? '';
  const [{ data: restoreData }, refetchRestore] = useQuery({ query: RestoreQuery, variables: { namespace: sandbox?.namespace ?? '', name: restoreName }, pause: !restoreName });
  const restore: RestoreView | null | undefined = restoreData?.strataRestore;
  const reload = () => {
    refetchSandbox({ requestPolicy: 'network-only' });
    if (restoreName) refetchRestore({ requestPolicy: 'network-only' });
  };
  useStrataEvents(reload, { kinds: ['sandbox', 'restore'], filter: (event) => event.name === name || event.name === restoreName });
  useFallbackRead(reload, !sandbox || !SANDBOX_SETTLED.includes(sandbox.phase));
  if (!sandbox || !restore) return error ? <FormError error={error} /> : <Loading what="the sandbox" />;
  return <RestoreProgress restore={restore} sandbox={{ name: sandbox.name, phase: sandbox.phase, message: sandbox.message }} />;
}

function useFallbackRead(read: () => void, running: boolean): void {
  useEffect(() => {
    if (!running) return;
    const timer = setInterval(read, FALLBACK_READ_MS);
    return () => clearInterval(timer);
  }, [running]);
}
