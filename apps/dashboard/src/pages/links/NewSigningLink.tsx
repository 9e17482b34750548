import { useMemo, useRef, useState } from 'react';
import { Button, Form } from 'react-aria-components';
import { useQuery } from 'urql';
import { BusyButton, Field, FormError, SelectField, useAction } from '@sigil/web-ui';
import { planRefusal } from '../../api/plan.ts';
import { unwrap } from '../../api/rest.ts';
import { useSession } from '../../app/session.tsx';
import { UpgradeNotice } from '../../app/UpgradeNotice.tsx';
import { graphql } from '../../gql/index.ts';
import { NumberInput } from '../envelopes/controls.tsx';
import { DEFAULT_LIMITS } from './usage.ts';

const LinkTemplates = graphql(`
  query SigningLinkTemplates {
    templates(first: 100) {
      nodes {
        id
        name
        latestVersion
      }
    }
  }
`);

const LinkTemplateRoles = graphql(`
  query SigningLinkTemplateRoles($id: ID!) {
    template(id: $id) {
      id
      latestVersion
      versions {
        version
        publishedAt
        roles {
          name
          order
        }
      }
    }
  }
`);

const FIELDS = ['/body/template', '/body/version', '/body/role', '/body/title', '/body/limits/perEmailPerDay', '/body/limits/perIpPerHour', '/body/limits/dailyCap'];

/**
 * The "New signing link" dialog: a published template (its latest version), the visitor's role in it, the title visitors
 * read, and the three limits with the API's defaults. Each refusal shows beside its field; a plan's with the way to upgrade.
 */
export function NewSigningLink({ close, onCreated }: { close: () => void; onCreated: () => void }) {
  const { rest } = useSession();
  const [{ data: list, fetching: loadingList }] = useQuery({ query: LinkTemplates });
  const published = (list?.templates.nodes ?? []).filter((t) => t.latestVersion !== null && t.latestVersion !== undefined);
  const [template, setTemplate] = useState('');
  const [{ data: chosen }] = useQuery({ query: LinkTemplateRoles, variables: { id: template }, pause: !template });
  const roles = useMemo(() => {
    const latest = chosen?.template?.versions.find((v) => v.publishedAt && v.version === String(chosen.template?.latestVersion));
    return [...(latest?.roles ?? [])].sort((a, b) => a.order - b.order);
  }, [chosen]);
  const [role, setRole] = useState('');
  const [title, setTitle] = useState('');
  const [perEmailPerDay, setPerEmailPerDay] = useState<number | undefined>(DEFAULT_LIMITS.perEmailPerDay);
  const [perIpPerHour, setPerIpPerHour] = useState<number | undefined>(DEFAULT_LIMITS.perIpPerHour);
  const [dailyCap, setDailyCap] = useState<number | undefined>();
  const action = useAction();
  // One Idempotency-Key per distinct request: a retry of the same form replays, a changed form is a new request.
  const sent = useRef<{ body: string; key: string }>(undefined);
  const refusal = planRefusal(action.error);
  const chosenRole = roles.some((r) => r.name === role) ? role : (roles[0]?.name ?? '');
  const templateName = published.find((t) => t.id === template)?.name;

  if (!loadingList && list && published.length === 0) {
    return (
      <div className="stack">
        <p>A signing link sends a published template. Publish one first on the Templates page.</p>
        <div className="dialog-actions">
          <Button className="button button-primary" onPress={close}>
            Close
          </Button>
        </div>
      </div>
    );
  }
  return (
    <Form
      className="stack"
      onSubmit={(e) => {
        e.preventDefault();
        const body = {
          template,
          version: 'latest' as const,
          role: chosenRole,
          title: title.trim() || templateName || '',
          limits: { perEmailPerDay: perEmailPerDay ?? DEFAULT_LIMITS.perEmailPerDay, perIpPerHour: perIpPerHour ?? DEFAULT_LIMITS.perIpPerHour, dailyCap: dailyCap ?? null },
        };
        const json = JSON.stringify(body);
        if (sent.current?.body !== json) sent.current = { body: json, key: crypto.randomUUID() };
        const key = sent.current.key;
        void action
          .run(() => unwrap(rest.POST('/v1/signing-links', { body, params: { header: { 'Idempotency-Key': key } } })))
          .then(() => {
            onCreated();
            close();
          })
          .catch(() => undefined);
      }}
    >
      <p className="muted">Anyone with the link can sign their own copy of the template after confirming their e-mail address with a code.</p>
      <SelectField
        label="Template"
        options={published.map((t) => ({ id: t.id, name: t.name, detail: `version ${t.latestVersion}` }))}
        value={template}
        onChange={(id) => {
          setTemplate(id);
          setRole('');
        }}
        error={action.error}
        pointer="/body/template"
        isDisabled={!list}
        description={loadingList ? 'Loading your templates…' : 'Its latest published version is used; publishing a new one later does not change the link.'}
      />
      <SelectField
        label="Visitor's role"
        options={roles.map((r) => ({ id: r.name, name: r.name }))}
        value={chosenRole}
        onChange={setRole}
        error={action.error}
        pointer="/body/role"
        isDisabled={roles.length === 0}
        description={template ? 'The template role the visitor fills and signs.' : 'Choose a template first.'}
      />
      <Field label="Title" name="title" autoComplete="off" value={title} onChange={setTitle} maxLength={200} error={action.error} pointer="/body/title" description={`The heading visitors read${templateName ? `; “${templateName}” when left empty` : ''}.`} />
      <fieldset className="links-limits">
        <legend>Limits</legend>
        <NumberInput label="Per e-mail address a day" value={perEmailPerDay} onChange={setPerEmailPerDay} minValue={1} maxValue={1000} error={action.error} pointer="/body/limits/perEmailPerDay" />
        <NumberInput label="Per IP address an hour" value={perIpPerHour} onChange={setPerIpPerHour} minValue={1} maxValue={10000} error={action.error} pointer="/body/limits/perIpPerHour" />
        <NumberInput label="Envelopes a day in all" value={dailyCap} onChange={setDailyCap} minValue={1} maxValue={1000000} error={action.error} pointer="/body/limits/dailyCap" description="Empty: no daily cap." />
      </fieldset>
      {refusal ? <UpgradeNotice refusal={refusal} /> : <FormError error={action.error} fields={FIELDS} />}
      <div className="dialog-actions">
        <Button className="button" onPress={close}>
          Cancel
        </Button>
        <BusyButton type="submit" className="button button-primary" busy={action.busy} busyLabel="Creating…">
          Create link
        </BusyButton>
      </div>
    </Form>
  );
}
