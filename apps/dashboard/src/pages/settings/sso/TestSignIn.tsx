import { useEffect, useRef, useState } from 'react';
import { BusyButton, FormError, useAction } from '@sigil/web-ui';
import { unwrap } from '../../../api/rest.ts';
import { useSession } from '../../../app/session.tsx';
import { attributeRows, type SsoConnectionTest } from './connection.ts';

/** How often a pending test is read, and for how long at most (the API expires a test well before). */
const POLL_MS = 1000;
const GIVE_UP_MS = 15 * 60_000;

/**
 * "Test sign-in": the API's test login (`POST .../tests`) opens in a pop-up window, where the person signs in at the
 * identity provider; the test is read every second until it is no longer pending, then its outcome shows here: the
 * attributes received, or the exact reason it failed. Nobody is signed in by it.
 */
export function TestSignIn({ providerId, onDone }: { providerId: string; onDone: () => void }) {
  const { rest } = useSession();
  const action = useAction();
  const [test, setTest] = useState<SsoConnectionTest>();
  const [blocked, setBlocked] = useState(false);
  const [gaveUp, setGaveUp] = useState(false);
  const popup = useRef<Window | null>(null);
  const pending = test?.status === 'pending';
  const testId = test?.id;

  useEffect(() => {
    if (!pending || !testId) return;
    const started = Date.now();
    let stopped = false;
    const timer = setInterval(() => {
      if (Date.now() - started > GIVE_UP_MS) {
        clearInterval(timer);
        setGaveUp(true);
        return;
      }
      unwrap(rest.GET('/v1/sso/connections/{providerId}/tests/{testId}', { params: { path: { providerId, testId } } })).then(
        (next) => {
          if (stopped || next.status === 'pending') return;
          setTest(next);
          popup.current?.close();
          onDone();
        },
        // A failed read (the network) is tried again on the next tick.
        () => undefined,
      );
    }, POLL_MS);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, [pending, testId, providerId, rest, onDone]);

  async function start() {
    setTest(undefined);
    setBlocked(false);
    setGaveUp(false);
    // Opened at once, while the press still counts as the person's (pop-up blockers), then sent to the test's URL;
    // without a way back to this page.
    const window_ = window.open('', `sso-test-${providerId}`, 'popup,width=560,height=720');
    if (window_) window_.opener = null;
    popup.current = window_;
    const created = await action.run(() => unwrap(rest.POST('/v1/sso/connections/{providerId}/tests', { params: { path: { providerId } } }))).catch(() => undefined);
    if (!created?.url) {
      window_?.close();
      return;
    }
    if (window_) window_.location.href = new URL(created.url, window.location.origin).href;
    else setBlocked(true);
    setTest(created);
  }

  return (
    <div className="stack test-signin">
      <div className="row">
        <BusyButton className="button" busy={action.busy} busyLabel="Starting…" onPress={() => void start()}>
          Test sign-in
        </BusyButton>
      </div>
      <FormError error={action.error} />
      <div role="status" aria-label={`Test sign-in of ${providerId}`}>
        {test && <Outcome test={test} blocked={blocked} gaveUp={gaveUp} />}
      </div>
    </div>
  );
}

function Outcome({ test, blocked, gaveUp }: { test: SsoConnectionTest; blocked: boolean; gaveUp: boolean }) {
  const url = test.url ? new URL(test.url, window.location.origin).href : undefined;
  if (test.status === 'pending') {
    if (gaveUp) return <p className="alert alert-info">No answer from the identity provider yet. Start another test when you are ready.</p>;
    return (
      <p className="alert alert-info">
        {blocked ? 'Your browser blocked the pop-up window. ' : 'Sign in at your identity provider in the pop-up window. '}
        {url && (
          <a href={url} target="_blank" rel="noopener noreferrer">
            {blocked ? 'Open the test sign-in' : 'Open it again'}
          </a>
        )}
      </p>
    );
  }
  if (test.status === 'succeeded') {
    const rows = attributeRows(test.attributes);
    return (
      <div className="alert alert-success stack">
        <p>
          <strong>Test sign-in succeeded.</strong> {rows.length ? 'The identity provider sent these attributes:' : 'The identity provider sent no attributes.'}
        </p>
        {rows.length > 0 && (
          <dl className="details attributes" aria-label="Attributes received">
            {rows.map(({ name, value }) => (
              <div key={name} className="contents">
                <dt>{name}</dt>
                <dd>{value}</dd>
              </div>
            ))}
          </dl>
        )}
      </div>
    );
  }
  const reason = test.reason ?? test.error;
  return (
    <p className="alert alert-error">
      <strong>{test.status === 'expired' ? 'Test sign-in expired' : 'Test sign-in failed'}.</strong>{' '}
      {reason ?? (test.status === 'expired' ? 'The identity provider did not answer in time.' : 'The API gave no reason.')}
    </p>
  );
}
