import { useCallback, useEffect, useRef, useState } from 'react';
import { useNavigate, useParams } from 'react-router';
import { useQuery } from 'urql';
import { unwrap } from '../../api/rest.ts';
import { useSession } from '../../app/session.tsx';
import { notifyTemplateChanged, useTemplateChanges } from './changes.ts';
import { DraftWorkspace } from './editor/DraftWorkspace.tsx';
import { Preview } from './Preview.tsx';
import { StartDraft } from './StartDraft.tsx';
import { latestPublished, TemplateQuery, toDraft } from './templateQuery.ts';
import { Versions } from './Versions.tsx';
import './templates.css';
import { ConfirmButton, FormError, Loading, Page, useAction } from '@sigil/web-ui';

/** A template: its draft in the editor (or the ways to start one), its versions, and a preview. */
export default function TemplatePage() {
  const { id = '' } = useParams();
  const { mode } = useSession();
  const [{ data, fetching, error }, refetch] = useQuery({ query: TemplateQuery, variables: { id } });
  const reload = useCallback(() => refetch({ requestPolicy: 'network-only' }), [refetch]);
  // A write of this page: read again, and tell this browser's other tabs (changes.ts).
  const changed = useCallback(() => {
    notifyTemplateChanged(id, mode);
    reload();
  }, [id, mode, reload]);
  useTemplateChanges(reload, { mode, templateId: id });
  // What the last action that replaced a part of the page did (publishing, starting a draft, a new document): the
  // focus goes to it, as the control the person used has gone with its part, and a screen reader reads it.
  const [outcome, setOutcome] = useState<{ message: string; templateId: string }>();
  const outcomeElement = useRef<HTMLParagraphElement>(null);
  const announce = useCallback((message: string) => setOutcome({ message, templateId: id }), [id]);
  useEffect(() => {
    if (outcome) outcomeElement.current?.focus();
  }, [outcome]);

  if (fetching && !data) return <Loading what="the template" />;
  if (error) return <p role="alert">{error.message}</p>;
  const template = data?.template;
  if (!template) {
    return (
      <Page title="Template not found">
        <p>There is no template {id} in {mode} mode. It may have been deleted, or belong to the other mode.</p>
      </Page>
    );
  }
  const draft = template.versions.find((v) => v.version === 'draft');
  const latest = latestPublished(template);
  // The route keeps this component from one template to the next (back and forward): nothing of one is shown on another.
  const said = outcome?.templateId === template.id ? outcome.message : undefined;
  return (
    <Page title={template.name} description={template.description ?? (template.latestVersion ? `Latest version: ${template.latestVersion}` : 'Not published yet')} actions={<DeleteTemplate id={template.id} name={template.name} />}>
      <p role="status" ref={outcomeElement} tabIndex={-1} className={said ? 'tpl-outcome alert alert-success' : 'tpl-outcome'}>
        {said}
      </p>
      {draft ? (
        <DraftWorkspace key={`${template.id}:${draft.file ?? 'document'}`} templateId={template.id} saved={toDraft(draft)} pages={draft.pages} onChanged={changed} onOutcome={announce} />
      ) : (
        <StartDraft key={template.id} templateId={template.id} name={template.name} latest={latest} onStarted={(message) => (announce(message), changed())} />
      )}
      <Versions templateId={template.id} versions={template.versions} />
      {template.versions.length > 0 && <Preview key={template.id} templateId={template.id} versions={template.versions} />}
    </Page>
  );
}

function DeleteTemplate({ id, name }: { id: string; name: string }) {
  const { rest, can } = useSession();
  const navigate = useNavigate();
  const action = useAction();
  if (!can('template:write')) return null;
  return (
    <ConfirmButton
      label="Delete template"
      title={`Delete ${name}?`}
      description="The template and its versions go. A template an envelope or a signing link used cannot be deleted."
      confirmLabel="Delete template"
      error={<FormError error={action.error} />}
      onConfirm={async () => {
        await action.run(() => unwrap(rest.DELETE('/v1/templates/{id}', { params: { path: { id } } })));
        navigate('/templates');
      }}
    />
  );
}
