import { useEffect, useRef, useState } from 'react';
import { Button, Form, Link } from 'react-aria-components';
import { useNavigate, useSearchParams } from 'react-router';
import { BusyButton, Field, FormError } from '@sigil/web-ui';
import { unwrap } from '../../api/rest.ts';
import { Card } from '../../app/Shell.tsx';
import { useSession } from '../../app/session.tsx';
import { discoverSso, ssoStartHref, type SsoRoute } from './sso.ts';

/** Where to go after signing in: a dashboard path from `?next=`, never another site. */
export function nextPath(params: URLSearchParams): string {
  const next = params.get('next') ?? '/';
  return next.startsWith('/') && !next.startsWith('//') ? next : '/';
}

/**
 * E-mail first: the API's discovery says whether the address signs in through its company's identity provider. With
 * SSO the person continues there; where SSO is required the password is not offered, except as the owners'
 * break-glass ("Sign in with password instead"; the API decides whether it is allowed). Without SSO, the password.
 */
export default function SignIn() {
  const { rest } = useSession();
  const [params] = useSearchParams();
  const [email, setEmail] = useState('');
  const [route, setRoute] = useState<SsoRoute>();
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const ssoError = params.get('sso_error');

  async function discover() {
    setBusy(true);
    setError(undefined);
    try {
      setRoute(await discoverSso(rest, email));
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  }

  return (
    <Card title="Sign in">
      {ssoError && (
        <div role="alert" className="alert alert-error">
          <strong>Single sign-on did not sign you in.</strong> {ssoError}
        </div>
      )}
      {route ? (
        <SignInAs email={email} route={route} onChangeEmail={() => setRoute(undefined)} />
      ) : (
        <Form
          onSubmit={(e) => {
            e.preventDefault();
            void discover();
          }}
        >
          <Field label="E-mail" type="email" name="email" autoComplete="email" isRequired value={email} onChange={setEmail} error={error} pointer="/query/email" autoFocus />
          <FormError error={error} fields={['/query/email']} />
          <BusyButton type="submit" className="button button-primary" busy={busy} busyLabel="Checking…">
            Continue
          </BusyButton>
        </Form>
      )}
      <p>
        New to Sigil? <Link href="/sign-up">Create an organization</Link>
      </p>
    </Card>
  );
}

/** The second step, for the e-mail given: single sign-on, the password, or both. */
function SignInAs({ email, route, onChangeEmail }: { email: string; route: SsoRoute; onChangeEmail: () => void }) {
  const [breakGlass, setBreakGlass] = useState(false);
  const [params] = useSearchParams();
  const ssoLink = useRef<HTMLAnchorElement>(null);
  useEffect(() => {
    // The step's first control takes the focus (the e-mail field it replaced had it).
    ssoLink.current?.focus();
  }, []);
  const passwordOffered = !route.sso || !route.enforced || breakGlass;
  return (
    <div className="stack">
      <p className="signin-as">
        Signing in as <strong>{email}</strong>{' '}
        <Button className="button-link" onPress={onChangeEmail}>
          Use another e-mail
        </Button>
      </p>
      {route.sso && (
        <>
          <p className="muted">{route.enforced ? `Addresses at ${email.split('@')[1]} sign in through their organization's identity provider.` : `Addresses at ${email.split('@')[1]} can sign in through their organization's identity provider.`}</p>
          <a ref={ssoLink} className="button button-primary" href={ssoStartHref(route.startUrl, nextPath(params))}>
            Continue with single sign-on
          </a>
        </>
      )}
      {route.sso && route.enforced && !breakGlass && (
        <p className="small">
          <Button className="button-link" onPress={() => setBreakGlass(true)}>
            Sign in with password instead
          </Button>{' '}
          <span className="muted">(owners only, when single sign-on is not available)</span>
        </p>
      )}
      {passwordOffered && <PasswordForm email={email} autoFocus={!route.sso || breakGlass} heading={route.sso ? 'Or with your password' : undefined} />}
    </div>
  );
}

function PasswordForm({ email, autoFocus, heading }: { email: string; autoFocus: boolean; heading?: string }) {
  const { rest, reload } = useSession();
  const navigate = useNavigate();
  const [params] = useSearchParams();
  const [password, setPassword] = useState('');
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);

  async function submit() {
    setBusy(true);
    setError(undefined);
    try {
      await unwrap(rest.POST('/v1/auth/sign-in', { body: { email, password } }));
      await reload();
      navigate(nextPath(params), { replace: true });
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  }

  return (
    <Form
      onSubmit={(e) => {
        e.preventDefault();
        void submit();
      }}
    >
      {heading && <h2 className="signin-or">{heading}</h2>}
      {/* The address travels with the password, so password managers pair them. */}
      <input type="hidden" name="email" autoComplete="username" value={email} />
      <Field label="Password" type="password" name="password" autoComplete="current-password" isRequired value={password} onChange={setPassword} error={error} pointer="/body/password" autoFocus={autoFocus} />
      <FormError error={error} fields={['/body/password']} />
      <BusyButton type="submit" className={heading ? 'button' : 'button button-primary'} busy={busy}>
        Sign in
      </BusyButton>
    </Form>
  );
}
