import { useEffect, useRef } from 'react';
import { useQuery } from 'urql';
import { Loading } from '@sigil/web-ui';
import { refusalOf } from '../../api/graphql-refusal.ts';
import { useStrataEvents } from '../../api/events.ts';
import { ReadError } from '../../components/ReadError.tsx';
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
  const failure = refusalOf(error);
  if (!restore) {
    if (failure) return <ReadError error={failure} retrying={fetching} onRetry={reload} />;
    if (data) return <NotThereYet what={`Restore ${namespace}/${name}`} />;
    return <Loading what="the restore" />;
  }
  return (
    <>
      {failure && <ReadError error={failure} retrying={fetching} onRetry={reload} />}
      <RestoreProgress restore={restore} />
    </>
  );
}

/**
 * A sandbox being opened: the restore that fills it (by the sandbox's `restore`), then the sandbox itself until it
 * is Ready (its post-restore SQL ran) or failed. Live: the events of both. A failed read of either is shown with the
 * API's words and a button to read again (the slow fallback read tries again too).
 */
export function FollowSandbox({ name }: { name: string }) {
  const [sandboxRead, refetchSandbox] = useQuery({ query: SandboxFollowQuery, variables: { name } });
  const sandbox = sandboxRead.data?.strataSandbox;
  const restoreName = sandbox?.restore ?? '';
  const [restoreRead, refetchRestore] = useQuery({ query: RestoreQuery, variables: { namespace: sandbox?.namespace ?? '', name: restoreName }, pause: !restoreName });
  const restore: RestoreView | null | undefined = restoreRead.data?.strataRestore;
  const reload = () => {
    refetchSandbox({ requestPolicy: 'network-only' });
    if (restoreName) refetchRestore({ requestPolicy: 'network-only' });
  };
  useStrataEvents(reload, { kinds: ['sandbox', 'restore'], filter: (event) => event.name === name || event.name === restoreName });
  useFallbackRead(reload, !sandbox || !restore || !SANDBOX_SETTLED.includes(sandbox.phase));
  const failure = refusalOf(sandboxRead.error) ?? (restoreName ? refusalOf(restoreRead.error) : undefined);
  const retry = <ReadError error={failure} retrying={sandboxRead.fetching || restoreRead.fetching} onRetry={reload} />;
  if (!sandbox || !restore) {
    if (failure) return retry;
    if (sandboxRead.data && !sandbox) return <NotThereYet what={`Sandbox ${name}`} />;
    if (restoreName && restoreRead.data && !restore) return <NotThereYet what={`Restore ${restoreName}, which fills sandbox ${name},`} />;
    return <Loading what={sandbox ? 'the restore that fills the sandbox' : 'the sandbox'} />;
  }
  return (
    <>
      {failure && retry}
      <RestoreProgress restore={restore} sandbox={{ name: sandbox.name, phase: sandbox.phase, message: sandbox.message }} />
    </>
  );
}

/** What a read answered with nothing: just started elsewhere (it is read again), deleted, or not for this caller. */
function NotThereYet({ what }: { what: string }) {
  return (
    <p className="muted" role="status">
      {what} cannot be found yet. It is read again every few seconds; if it stays away, it was deleted or your groups do not let you see it.
    </p>
  );
}

/** Reads every FALLBACK_READ_MS while `running`, with the latest `read` (it names the restore once the sandbox is read). */
function useFallbackRead(read: () => void, running: boolean): void {
  const latest = useRef(read);
  latest.current = read;
  useEffect(() => {
    if (!running) return;
    const timer = setInterval(() => latest.current(), FALLBACK_READ_MS);
    return () => clearInterval(timer);
  }, [running]);
}
