import { useState } from 'react';
import { Button, FieldError, Form, Input, Label, NumberField, Radio, RadioGroup, Text } from 'react-aria-components';
import type { components } from '@sigil/proto/api/sigil';
import { BusyButton, Field, FormError, useAction } from '@sigil/web-ui';
import { unwrap } from '../../api/rest.ts';
import { useSession } from '../../app/session.tsx';
import { CheckboxField, detailFor, Worded } from './fields.tsx';
import { SecretView } from './SecretView.tsx';
import { ADMIN_PERMISSIONS, PERMISSION_WORDS, PERMISSIONS, type Permission } from './words.ts';

type ApiKeyCreated = components['schemas']['ApiKeyCreated'];

const FIELDS = ['/body/name', '/body/mode', '/body/scopes', '/body/expiresInDays'];

/** The content of the "Create API key" dialog: the form, then the secret, shown this once. */
export function CreateApiKey({ close, onCreated }: { close: () => void; onCreated: () => void }) {
  const [created, setCreated] = useState<ApiKeyCreated>();
  if (created) return <NewSecret created={created} close={close} />;
  return (
    <CreateApiKeyForm
      close={close}
      onCreated={(key) => {
        setCreated(key);
        onCreated();
      }}
    />
  );
}

function CreateApiKeyForm({ close, onCreated }: { close: () => void; onCreated: (key: ApiKeyCreated) => void }) {
  const { rest, mode: currentMode, session } = useSession();
  const held = PERMISSIONS.filter((p) => session?.permissions.includes(p));
  const [name, setName] = useState('');
  const [mode, setMode] = useState<'test' | 'live'>(currentMode);
  // The API's default, shown so the person sees what the key will hold: their permissions minus the administrative ones.
  const [scopes, setScopes] = useState<string[]>(held.filter((p) => !ADMIN_PERMISSIONS.includes(p)));
  const [days, setDays] = useState<number>(NaN);
  const action = useAction();

  async function submit() {
    const body = { name, mode, scopes: scopes as Permission[], ...(Number.isNaN(days) ? {} : { expiresInDays: days }) };
    const key = await action.run(() => unwrap(rest.POST('/v1/api-keys', { body }))).catch(() => undefined);
    if (key) onCreated(key);
  }

  return (
    <Form
      onSubmit={(e) => {
        e.preventDefault();
        void submit();
      }}
    >
      <Field label="Name" name="name" isRequired value={name} onChange={setName} error={action.error} pointer="/body/name" description="What uses the key, e.g. “Billing server”." autoFocus />
      <RadioGroup className="field radio-field" value={mode} onChange={(v) => setMode(v === 'live' ? 'live' : 'test')} isInvalid={detailFor(action.error, '/body/mode') !== undefined} validationBehavior="aria">
        <Label>Mode</Label>
        <Text slot="description">A test key sees and creates test data only; a live key sends for real.</Text>
        <div className="radio-list">
          <Radio value="test" className="radio">
            <span className="radio-dot" aria-hidden="true" />
            Test
          </Radio>
          <Radio value="live" className="radio">
            <span className="radio-dot" aria-hidden="true" />
            Live
          </Radio>
        </div>
        <FieldError>{detailFor(action.error, '/body/mode')}</FieldError>
      </RadioGroup>
      <CheckboxField
        label="Scopes"
        description="What the key may do. A key can hold only permissions you hold."
        options={held.map((p) => ({ value: p, label: <Worded words={PERMISSION_WORDS[p]} code={p} /> }))}
        value={scopes}
        onChange={setScopes}
        error={action.error}
        pointer="/body/scopes"
      />
      <NumberField className="field" value={days} onChange={setDays} minValue={1} maxValue={365} step={1} isInvalid={detailFor(action.error, '/body/expiresInDays') !== undefined} validationBehavior="aria" formatOptions={{ maximumFractionDigits: 0, useGrouping: false }}>
        <Label>Expires in days</Label>
        <Input />
        <Text slot="description">1 to 365. Leave empty for a key that never expires.</Text>
        <FieldError>{detailFor(action.error, '/body/expiresInDays')}</FieldError>
      </NumberField>
      <FormError error={action.error} fields={FIELDS} />
      <div className="dialog-actions">
        <Button className="button" onPress={close}>
          Cancel
        </Button>
        <BusyButton type="submit" className="button button-primary" busy={action.busy}>
          Create key
        </BusyButton>
      </div>
    </Form>
  );
}

function NewSecret({ created, close }: { created: ApiKeyCreated; close: () => void }) {
  const { mode } = useSession();
  return (
    <div className="stack">
      <p className="alert alert-warning" role="note">
        <strong>Copy this secret now: it is shown only once.</strong> Sigil keeps only its hash, so nobody can show it to you again. If you lose it,
        revoke the key and create another.
      </p>
      <SecretView label="New API key secret" secret={created.secret} />
      <p className="muted">
        {created.name} is a {created.mode} key
        {created.mode !== mode ? `: switch to ${created.mode} mode to see it in the list.` : '.'} Send it as <code>Authorization: Bearer {created.prefix}…</code>.
      </p>
      <div className="dialog-actions">
        <Button className="button button-primary" onPress={close}>
          Done
        </Button>
      </div>
    </div>
  );
}
