import { useState } from 'react';
import { Form, Link } from 'react-aria-components';
import { useNavigate, useSearchParams } from 'react-router';
import { BusyButton, Field, FormError } from '@sigil/web-ui';
import { unwrap } from '../../api/rest.ts';
import { Card } from '../../app/Shell.tsx';
import { useSession } from '../../app/session.tsx';

/** Where to go after signing in: a dashboard path from `?next=`, never another site. */
export function nextPath(params: URLSearchParams): string {
  const next = params.get('next') ?? '/';
  return next.startsWith('/') && !next.startsWith('//') ? next : '/';
}

export default function SignIn() {
  const { rest, reload } = useSession();
  const navigate = useNavigate();
  const [params] = useSearchParams();
  const [email, setEmail] = useState('');
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
    <Card title="Sign in">
      <Form
        onSubmit={(e) => {
          e.preventDefault();
          void submit();
        }}
      >
        <Field label="E-mail" type="email" name="email" autoComplete="email" isRequired value={email} onChange={setEmail} error={error} pointer="/body/email" autoFocus />
        <Field label="Password" type="password" name="password" autoComplete="current-password" isRequired value={password} onChange={setPassword} error={error} pointer="/body/password" />
        <FormError error={error} fields={['/body/email', '/body/password']} />
        <BusyButton type="submit" className="button button-primary" busy={busy}>
          Sign in
        </BusyButton>
      </Form>
      <p>
        New to Sigil? <Link href="/sign-up">Create an organization</Link>
      </p>
    </Card>
  );
}
