import { useState } from 'react';
import { Form } from 'react-aria-components';
import { useNavigate, useSearchParams } from 'react-router';
import { BusyButton, Field, FormError } from '@sigil/web-ui';
import { unwrap } from '../../api/rest.ts';
import { Card } from '../../app/Shell.tsx';
import { useSession } from '../../app/session.tsx';

/** The invitation e-mail links here with `?token=`; the person chooses their name and password and is signed in. */
export default function AcceptInvitation() {
  const { rest, reload } = useSession();
  const navigate = useNavigate();
  const [params] = useSearchParams();
  const [token, setToken] = useState(params.get('token') ?? '');
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);

  async function submit() {
    setBusy(true);
    setError(undefined);
    try {
      await unwrap(rest.POST('/v1/auth/accept-invitation', { body: { token, name, password } }));
      await reload();
      navigate('/', { replace: true });
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  }

  return (
    <Card title="Join your team on Sigil">
      <Form
        onSubmit={(e) => {
          e.preventDefault();
          void submit();
        }}
      >
        {!params.get('token') && <Field label="Invitation code" name="token" isRequired value={token} onChange={setToken} error={error} pointer="/body/token" />}
        <Field label="Your name" name="name" autoComplete="name" isRequired value={name} onChange={setName} error={error} pointer="/body/name" autoFocus />
        <Field label="Password" type="password" name="password" autoComplete="new-password" isRequired value={password} onChange={setPassword} error={error} pointer="/body/password" description="At least 12 characters." />
        <FormError error={error} fields={['/body/token', '/body/name', '/body/password']} />
        <BusyButton type="submit" className="button button-primary" busy={busy}>
          Accept invitation
        </BusyButton>
      </Form>
    </Card>
  );
}
