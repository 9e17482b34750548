import { useCallback, useEffect, useState } from 'react';
import { Button } from 'react-aria-components';
import { useNavigate, useParams } from 'react-router';
import { useQuery } from 'urql';
import { useLive } from '../../api/live.ts';
import { unwrap } from '../../api/rest.ts';
import { useAction } from '../../api/useAction.ts';
import { useSession } from '../../app/session.tsx';
import { ConfirmButton } from '../../components/Dialog.tsx';
import { FormError } from '../../components/Form.tsx';
import { Loading, Page } from '../../components/Page.tsx';
import { graphql } from '../../gql/index.ts';
import type { TemplateQuery as TemplateData } from '../../gql/graphql.ts';
import { DraftWorkspace } from './editor/DraftWorkspace.tsx';
import type { Draft, DraftField, FieldType } from './editor/model.ts';
import { FIRST_ROLE } from './editor/useDraft.ts';
import { Preview } from './Preview.tsx';
import { UploadDocument } from './UploadDocument.tsx';
import { Versions } from './Versions.tsx';
import './templates.css';

const TemplateQuery = graphql(`
  query Template($id: ID!) {
    template(id: $id) {
      id
      name
      description
      latestVersion
      hasDraft
      versions {
        version
        file
        pageCount
        pages {
          width
          height
        }
        body {
          format
          content
        }
        roles {
          name
          order
        }
        fields {
          id
          role
          type
          required
          page
          x
          y
          width
          height
          variable
        }
        variables {
          name
          required
        }
        createdAt
        publishedAt
      }
    }
  }
`);

type Version = NonNullable<TemplateData['template']>['versions'][number];

/** Drafts and publishes have no domain event: the page reads them again this often while it is visible. */
const POLL_MS = 15_000;

/** A version as the editor's draft (GraphQL's nulls become absent members, as SaveTemplateDraft takes them). */
function toDraft(version: Version): Draft {
  return {
    file: version.file ?? null,
    body: version.body ? { format: 'html', content: version.body.content } : null,
    roles: version.roles.map((r) => ({ name: r.name, order: r.order })),
    variables: version.variables.map((v) => ({ name: v.name, required: v.required })),
    fields: version.fields.map((f) => {
      const field: DraftField = { id: f.id, role: f.role, type: f.type as FieldType, required: f.required };
      for (const key of ['page', 'x', 'y', 'width', 'height'] as const) if (f[key] !== null && f[key] !== undefined) field[key] = f[key];
      if (f.variable) field.variable = f.variable;
      return field;
    }),
  };
}

export default function TemplatePage() {
  const { id = '' } = useParams();
  const { mode } = useSession();
  const [{ data, fetching, error }, refetch] = useQuery({ query: TemplateQuery, variables: { id } });
  const reload = useCallback(() => refetch({ requestPolicy: 'network-only' }), [refetch]);
  const [published, setPublished] = useState<string>();
  useLive(reload, { mode, types: ['template.'], filter: (change) => change.ids.templateId === id });
  useEffect(() => {
    const timer = setInterval(() => document.visibilityState === 'visible' && reload(), POLL_MS);
    return () => clearInterval(timer);
  }, [reload]);

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
  const latest = template.versions.find((v) => v.version !== 'draft');
  return (
    <Page title={template.name} description={template.description ?? (template.latestVersion ? `Latest version: ${template.latestVersion}` : 'Not published yet')} actions={<DeleteTemplate id={template.id} name={template.name} />}>
      <p role="status" className={published ? 'alert alert-success' : undefined}>
        {published}
      </p>
      {draft ? (
        <DraftWorkspace key={draft.file ?? 'document'} templateId={template.id} saved={toDraft(draft)} pages={draft.pages} onChanged={reload} onPublished={setPublished} />
      ) : (
        <StartDraft templateId={template.id} name={template.name} latest={latest} onChanged={() => (setPublished(undefined), reload())} />
      )}
      <Versions templateId={template.id} versions={template.versions} />
      {template.versions.length > 0 && <Preview templateId={template.id} versions={template.versions} />}
    </Page>
  );
}

/** No draft: upload a document, write one as text, or start from the latest published version. */
function StartDraft({ templateId, name, latest, onChanged }: { templateId: string; name: string; latest?: Version; onChanged: () => void }) {
  const { rest } = useSession();
  const action = useAction();
  const saveDraft = (body: Record<string, unknown>) => action.run(() => unwrap(rest.PUT('/v1/templates/{id}/draft', { params: { path: { id: templateId } }, body }))).then(onChanged, () => undefined);
  const writeAsText = () => saveDraft({ body: { format: 'html', content: `<h1>${escapeHtml(name)}</h1>\n<p></p>` }, roles: [FIRST_ROLE], fields: [], variables: [] });
  const fromLatest = () => {
    if (!latest) return;
    const { file, body, ...rest } = toDraft(latest);
    return saveDraft({ ...(file ? { file } : { body }), ...rest });
  };
  return (
    <section aria-labelledby="tpl-start-heading" className="tpl-section">
      <h2 id="tpl-start-heading">{latest ? 'Start a new draft' : 'Add the document'}</h2>
      <UploadDocument templateId={templateId} replacing={false} onUploaded={onChanged} />
      <div className="tpl-actions">
        <Button className="button" onPress={writeAsText} isDisabled={action.busy}>
          Write the document as text
        </Button>
        {latest && (
          <Button className="button" onPress={fromLatest} isDisabled={action.busy}>
            Edit a new draft from version {latest.version}
          </Button>
        )}
      </div>
      <FormError error={action.error} />
    </section>
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

function escapeHtml(text: string): string {
  return text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c] as string);
}
