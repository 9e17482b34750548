import { useCallback, useEffect, useState, type ReactNode } from 'react';
import { FormError, Loading } from '@sigil/web-ui';
import { ApiError } from '../../api/problem.ts';
import { useSession, type Permission } from '../../app/session.tsx';
import { usePollWhileVisible } from '../developers/poll.ts';

/** Settings have no domain event on the live stream: an implemented one is read again this often while visible. */
const POLL_MS = 30_000;

export interface Read<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => void;
}

/**
 * One REST read of a settings page (these operations exist only in the REST contract, several of them dashboard-only):
 * read on open, again on `reload()` and every 30 s while visible unless the API said it does not implement it.
 */
export function useRead<T>(load: () => Promise<T>, enabled = true): Read<T> {
  const [data, setData] = useState<T>();
  const [error, setError] = useState<unknown>();
  const [loading, setLoading] = useState(enabled);
  const reload = useCallback(() => {
    if (!enabled) return;
    load().then(
      (value) => {
        setData(value);
        setError(undefined);
        setLoading(false);
      },
      (e: unknown) => {
        setError(e);
        setLoading(false);
      },
    );
    // `load` is a new closure each render, but what it reads is fixed by the page: only `enabled` matters.
  }, [enabled]);
  useEffect(reload, [reload]);
  usePollWhileVisible(() => {
    if (!isNotImplemented(error)) reload();
  }, POLL_MS);
  return { data, error, loading, reload };
}

export function isNotImplemented(error: unknown): boolean {
  return error instanceof ApiError && error.problem.status === 501;
}

/**
 * What a settings page shows instead of its content: the permission it needs, the API's own words when the operation
 * is not implemented in this deployment (501 names it), or any other refusal.
 */
export function ReadState<T>({ read, what, permission, children }: { read: Read<T>; what: string; permission: Permission; children: (data: T) => ReactNode }) {
  const { can, session } = useSession();
  if (!can(permission)) {
    return (
      <p className="alert alert-info">
        You cannot see or change {what.toLowerCase()}: that needs the <code>{permission}</code> permission{permission === 'billing:manage' ? ', which owners hold' : ', which owners and admins hold'}. Your role is {session?.role}.
      </p>
    );
  }
  if (read.loading) return <Loading what={what.toLowerCase()} />;
  if (isNotImplemented(read.error)) {
    return (
      <div className="alert alert-info" role="status">
        <strong>{what} is not available in this deployment yet.</strong> The API answered: “{(read.error as ApiError).problem.detail}”
      </div>
    );
  }
  if (read.error) return <FormError error={read.error} />;
  return read.data === undefined ? null : <>{children(read.data)}</>;
}
