import { useState } from 'react';
import { Form } from 'react-aria-components';
import { useNavigate, useSearchParams } from 'react-router';
import { ApiError, BusyButton, Field, FormError, SelectField, statusTitle } from '@sigil/web-ui';
import { ROLE_ABILITIES, ROLES, type Role } from '../../app/roles.ts';
import { DEV_SESSION, useSession } from '../../app/session.tsx';
import { Card } from '../../app/Shell.tsx';

/**
 * In production an identity-aware access proxy signs people in before the console loads; a caller reaching this page
 * there has no valid credentials. On the local stack the dev issuer stands in for the proxy: an e-mail and a role.
 */
export default function SignIn() {
  const { devSignIn } = useSession();
  return <Card title="Sign in to Strata">{devSignIn ? <DevSignIn /> : <ProxyOnly />}</Card>;
}

function ProxyOnly() {
  return (
    <>
      <p>Strata is reached through your organization's access proxy, which did not vouch for you (or your sign-in there expired).</p>
      <p>
        <a href={window.location.pathname.replace(/\/sign-in$/, '/')}>Try again</a> after signing in to the proxy; if it keeps happening, ask your administrator for a Strata role.
      </p>
    </>
  );
}

function DevSignIn() {
  const { reload } = useSession();
  const navigate = useNavigate();
  const [params] = useSearchParams();
  const [email, setEmail] = useState('you@example.com');
  const [role, setRole] = useState<Role>('restorer-admin');
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);

  async function submit() {
    setBusy(true);
    setError(undefined);
    try {
      const res = await fetch(DEV_SESSION, { method: 'POST', credentials: 'same-origin', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, role }) });
      if (!res.ok) {
        const body = (await res.json().catch(() => ({}))) as { error?: string };
        throw new ApiError({ title: statusTitle(res.status), status: res.status, detail: body.error ?? `The sign-in answered ${res.status}.`, errors: body.error?.includes('email') ? [{ pointer: '/body/email', detail: body.error }] : [] });
      }
      await reload();
      navigate(params.get('next') ?? '/', { replace: true });
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  }

  return (
    <>
      <p className="muted">Local stack: the dev issuer stands in for the access proxy. Pick who you are and the role to try.</p>
      <Form
        onSubmit={(e) => {
          e.preventDefault();
          void submit();
        }}
      >
        <Field label="E-mail" type="email" value={email} onChange={setEmail} isRequired autoComplete="email" error={error} pointer="/body/email" />
        <SelectField label="Role" options={ROLES.map((r) => ({ id: r, name: r, detail: ROLE_ABILITIES[r] }))} value={role} onChange={setRole} description="What the console shows and lets you do follows the role." />
        <FormError error={error} fields={['/body/email']} />
        <BusyButton type="submit" className="button button-primary" busy={busy} busyLabel="Signing in…">
          Sign in
        </BusyButton>
      </Form>
    </>
  );
}
