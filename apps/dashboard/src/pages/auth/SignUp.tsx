import { useState } from 'react';
import { Form, Link } from 'react-aria-components';
import { useNavigate } from 'react-router';
import { BusyButton, Field, FormError } from '@sigil/web-ui';
import { unwrap } from '../../api/rest.ts';
import { Card } from '../../app/Shell.tsx';
import { useSession } from '../../app/session.tsx';

const FIELDS = ['/body/organizationName', '/body/name', '/body/email', '/body/password'];

export default function SignUp() {
  const { rest, reload } = useSession();
  const navigate = useNavigate();
  const [form, setForm] = useState({ organizationName: '', name: '', email: '', password: '' });
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const set = (key: keyof typeof form) => (value: string) => setForm((f) => ({ ...f, [key]: value }));

  async function submit() {
    setBusy(true);
    setError(undefined);
    try {
      await unwrap(rest.POST('/v1/auth/sign-up', { body: form }));
      await reload();
      navigate('/', { replace: true });
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  }

  return (
    <Card title="Create your organization">
      <Form
        onSubmit={(e) => {
          e.preventDefault();
          void submit();
        }}
      >
        <Field label="Organization name" name="organizationName" autoComplete="organization" isRequired value={form.organizationName} onChange={set('organizationName')} error={error} pointer="/body/organizationName" autoFocus />
        <Field label="Your name" name="name" autoComplete="name" isRequired value={form.name} onChange={set('name')} error={error} pointer="/body/name" />
        <Field label="E-mail" type="email" name="email" autoComplete="email" isRequired value={form.email} onChange={set('email')} error={error} pointer="/body/email" />
        <Field label="Password" type="password" name="password" autoComplete="new-password" isRequired value={form.password} onChange={set('password')} error={error} pointer="/body/password" description="At least 12 characters." />
        <FormError error={error} fields={FIELDS} />
        <BusyButton type="submit" className="button button-primary" busy={busy}>
          Create organization
        </BusyButton>
      </Form>
      <p>
        Already have an account? <Link href="/sign-in">Sign in</Link>
      </p>
    </Card>
  );
}
