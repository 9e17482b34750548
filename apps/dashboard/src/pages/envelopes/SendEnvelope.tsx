import { useEffect, useMemo, useRef, useState } from 'react';
import { Button, Form, Link } from 'react-aria-components';
import { useNavigate, useSearchParams } from 'react-router';
import { useQuery } from 'urql';
import { unwrap } from '../../api/rest.ts';
import { useSession } from '../../app/session.tsx';
import { graphql } from '../../gql/index.ts';
import { SelectField, type Option } from './controls.tsx';
import { DryRunReview } from './DryRunReview.tsx';
import { CcFields, RecipientFieldset } from './RecipientFields.tsx';
import { draftFor, toCreateEnvelope, type DryRunResult, type SendDraft } from './sendForm.ts';
import { OPTION_POINTERS, SendOptions } from './SendOptions.tsx';
import './envelopes.css';
import { Field, FormError, Loading, Page, useAction } from '@sigil/web-ui';

const PublishedTemplates = graphql(`
  query SendTemplates {
    templates(first: 100) {
      nodes {
        id
        name
        latestVersion
      }
    }
  }
`);

const TemplateVersions = graphql(`
  query SendTemplateVersions($id: ID!) {
    template(id: $id) {
      id
      name
      latestVersion
      versions {
        version
        publishedAt
        roles {
          name
          order
        }
        variables {
          name
          required
        }
      }
    }
  }
`);

/** Every pointer a field of the form shows; the rest goes to the form's error. */
const fieldPointers = (draft: SendDraft) => [
  '/body/template',
  '/body/version',
  ...draft.recipients.flatMap((_, i) => ['name', 'email', 'delivery', 'verification', 'order', 'phone'].map((f) => `/body/recipients/${i}/${f}`)),
  ...draft.cc.flatMap((_, i) => [`/body/cc/${i}/name`, `/body/cc/${i}/email`]),
  ...Object.keys(draft.variables).map((name) => `/body/variables/${name}`),
  ...OPTION_POINTERS,
];

/** After a refusal, focus goes to the first field the API named (or the form's error), so the keyboard lands on it. */
function focusFirstProblem(form: HTMLFormElement | null) {
  requestAnimationFrame(() => {
    const target = form?.querySelector<HTMLElement>('[aria-invalid="true"]') ?? form?.querySelector<HTMLElement>('[role="alert"]');
    if (target && !target.hasAttribute('tabindex') && target.getAttribute('role') === 'alert') target.tabIndex = -1;
    target?.focus();
  });
}

export default function SendEnvelope() {
  const { rest, mode } = useSession();
  const navigate = useNavigate();
  const [params, setParams] = useSearchParams();
  const templateId = params.get('template') ?? '';
  const [{ data: list }] = useQuery({ query: PublishedTemplates });
  const [{ data: chosen, fetching: loadingTemplate }] = useQuery({ query: TemplateVersions, variables: { id: templateId }, pause: !templateId });
  const template = chosen?.template;
  const published = useMemo(() => (template?.versions ?? []).filter((v) => v.publishedAt), [template]);
  const [draft, setDraft] = useState<SendDraft>();
  const [review, setReview] = useState<{ key: string; result: DryRunResult; idempotencyKey: string }>();
  const action = useAction();
  const formRef = useRef<HTMLFormElement>(null);

  // A template (or another version) gives the form its roles and variables; names typed for a role that stays are kept.
  const versionOf = (version: string) => (version === 'latest' ? published[0] : published.find((v) => v.version === version));
  const startDraft = (version: string) => {
    const chosenVersion = versionOf(version);
    if (!chosenVersion) return setDraft(undefined);
    const next = draftFor(version, chosenVersion.roles);
    next.recipients = next.recipients.map((r) => ({ ...r, ...draft?.recipients.find((old) => old.role === r.role && old.order === r.order), role: r.role }));
    next.variables = Object.fromEntries(chosenVersion.variables.map((v) => [v.name, draft?.variables[v.name] ?? '']));
    setDraft({ ...next, cc: draft?.cc ?? [] });
    setReview(undefined);
    action.reset();
  };
  useEffect(() => {
    if (template && published.length > 0) startDraft('latest');
    else setDraft(undefined);
    // A new template resets the form; the draft read inside is the one being replaced.
  }, [template?.id, published.length]);

  const draftKey = JSON.stringify(draft);
  const reviewed = review !== undefined && review.key === draftKey && review.result.valid;
  const templateOptions: Option[] = (list?.templates.nodes ?? []).filter((t) => t.latestVersion != null).map((t) => ({ id: t.id, label: t.name }));
  const variables = versionOf(draft?.version ?? 'latest')?.variables ?? [];

  const post = (dryRun: boolean, idempotencyKey?: string) =>
    unwrap(
      rest.POST('/v1/envelopes', {
        params: { query: { ...(dryRun ? { dry_run: 'true' } : {}), ...(mode === 'test' ? { test_mode: 'true' } : {}) }, header: idempotencyKey ? { 'Idempotency-Key': idempotencyKey } : {} },
        body: toCreateEnvelope(templateId, draft as SendDraft),
      }),
    );

  async function dryRun() {
    try {
      const result = (await action.run(() => post(true))) as DryRunResult;
      setReview({ key: draftKey, result, idempotencyKey: crypto.randomUUID() });
    } catch {
      setReview(undefined);
      focusFirstProblem(formRef.current);
    }
  }

  async function send() {
    if (!review) return;
    try {
      const envelope = (await action.run(() => post(false, review.idempotencyKey))) as { id: string };
      navigate(`/envelopes/${envelope.id}`);
    } catch {
      focusFirstProblem(formRef.current);
    }
  }

  return (
    <Page title="Send an envelope" description="Choose a published template, fill in who signs, check with a dry run, then send.">
      {mode === 'test' && (
        <p className="alert alert-info" role="note">
          Test mode: nothing is sent for real. The envelope is a test envelope stamped TEST; e-mails reach only members of your organization.
        </p>
      )}
      <Form
        ref={formRef}
        className="env-send react-aria-Form"
        validationBehavior="aria"
        onSubmit={(e) => {
          e.preventDefault();
          void (reviewed ? send() : dryRun());
        }}
      >
        {list && templateOptions.length === 0 && (
          <p>
            No published template yet. <Link href="/templates">Publish a template</Link> first.
          </p>
        )}
        <SelectField label="Template" options={templateOptions} value={templateId} onChange={(id) => setParams({ template: id }, { replace: true })} error={action.error} pointer="/body/template" description={templateId ? undefined : 'Only published templates can be sent.'} />
        {templateId && loadingTemplate && !template && <Loading what="the template" />}
        {templateId && chosen && !template && <p role="alert" className="alert alert-error">Template {templateId} was not found.</p>}
        {template && published.length === 0 && <p className="alert alert-info">This template has no published version yet: publish it before sending.</p>}
        {draft && (
          <>
            <SelectField
              label="Version"
              options={[{ id: 'latest', label: `Latest (version ${published[0]?.version ?? ''})` }, ...published.map((v) => ({ id: v.version, label: `Version ${v.version}` }))]}
              value={draft.version}
              onChange={startDraft}
              error={action.error}
              pointer="/body/version"
            />
            {draft.recipients.map((recipient, i) => (
              <RecipientFieldset key={recipient.role} index={i} recipient={recipient} error={action.error} onChange={(next) => setDraft({ ...draft, recipients: draft.recipients.map((r, j) => (j === i ? next : r)) })} />
            ))}
            {variables.length > 0 && (
              <fieldset>
                <legend>Variables</legend>
                {variables.map((v) => (
                  <Field key={v.name} label={v.name} value={draft.variables[v.name] ?? ''} onChange={(value) => setDraft({ ...draft, variables: { ...draft.variables, [v.name]: value } })} isRequired={v.required} description={v.required ? 'Required: filled into the document.' : 'Optional: filled into the document.'} error={action.error} pointer={`/body/variables/${v.name}`} />
                ))}
              </fieldset>
            )}
            <CcFields cc={draft.cc} onChange={(cc) => setDraft({ ...draft, cc })} error={action.error} />
            <SendOptions draft={draft} onChange={setDraft} error={action.error} />
            <FormError error={action.error} fields={fieldPointers(draft)} />
            {review && <DryRunReview result={review.result} stale={!reviewed} />}
            <div className="env-form-actions">
              <Button type={reviewed ? 'button' : 'submit'} className={reviewed ? 'button' : 'button button-primary'} isDisabled={action.busy} onPress={reviewed ? () => void dryRun() : undefined}>
                Dry run
              </Button>
              <Button type={reviewed ? 'submit' : 'button'} className="button button-primary" isDisabled={!reviewed || action.busy}>
                Send envelope
              </Button>
            </div>
            {!reviewed && <p className="muted small">Send becomes available after a dry run of exactly what is in the form.</p>}
          </>
        )}
      </Form>
    </Page>
  );
}
