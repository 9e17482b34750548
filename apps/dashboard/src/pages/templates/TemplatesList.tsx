import { useEffect, useState } from 'react';
import { Button, Form, Input, Label, Link, SearchField } from 'react-aria-components';
import { useNavigate, useSearchParams } from 'react-router';
import { useQuery } from 'urql';
import { unwrap } from '../../api/rest.ts';
import { useSession } from '../../app/session.tsx';
import { graphql } from '../../gql/index.ts';
import { useTemplateChanges } from './changes.ts';
import './templates.css';
import { DialogButton, Field, FormError, Loading, Page, useAction, When } from '@sigil/web-ui';

const PAGE_SIZE = 20;

const TemplatesQuery = graphql(`
  query Templates($first: Int!, $after: String, $q: String) {
    templates(first: $first, after: $after, q: $q) {
      totalCount
      hasMore
      nextCursor
      nodes {
        id
        name
        description
        latestVersion
        hasDraft
        updatedAt
      }
    }
  }
`);

/** The search typed, applied a moment after typing stops (one query per pause, not per key). */
function useDebounced(value: string, ms = 250): string {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return settled;
}

export default function TemplatesList() {
  const { mode, can } = useSession();
  const [params, setParams] = useSearchParams();
  const [typed, setTyped] = useState(params.get('q') ?? '');
  const q = useDebounced(typed.trim());
  // The cursors of the pages before this one: Previous pops, Next pushes.
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const after = cursors[cursors.length - 1];
  useEffect(() => {
    setCursors([undefined]);
    setParams(q ? { q } : {}, { replace: true });
  }, [q, setParams]);

  const [{ data, fetching, error }, refetch] = useQuery({ query: TemplatesQuery, variables: { first: PAGE_SIZE, after, q: q || null } });
  // Created and deleted templates arrive on the live stream; drafts and versions (the Latest version and Draft
  // columns) from this browser's other tabs, or by a read every 15 s: they have no event (changes.ts).
  useTemplateChanges(() => refetch({ requestPolicy: 'network-only' }), { mode });
  const list = data?.templates;

  return (
    <Page title="Templates" description="Documents with their fields and roles, ready to send as envelopes." actions={can('template:write') && <CreateTemplate />}>
      <SearchField className="field search-field" value={typed} onChange={setTyped} aria-describedby="templates-count">
        <Label>Search templates</Label>
        <Input placeholder="Name or description" />
      </SearchField>
      <p id="templates-count" className="muted" role="status">
        {list ? `${list.totalCount} ${list.totalCount === 1 ? 'template' : 'templates'}${q ? ` match “${q}”` : ''} in ${mode} mode.` : ''}
      </p>
      {fetching && !data && <Loading what="templates" />}
      {error && <p role="alert">{error.message}</p>}
      {list && list.nodes.length > 0 && (
        <div className="table-wrap">
          <table className="table">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Latest version</th>
                <th scope="col">Draft</th>
                <th scope="col">Updated</th>
              </tr>
            </thead>
            <tbody>
              {list.nodes.map((template) => (
                <tr key={template.id}>
                  <td>
                    <Link href={`/templates/${template.id}`}>{template.name}</Link>
                    {template.description && <div className="muted tpl-description">{template.description}</div>}
                  </td>
                  <td>{template.latestVersion ? `Version ${template.latestVersion}` : <span className="muted">Not published</span>}</td>
                  <td>{template.hasDraft ? 'Draft in progress' : <span className="muted">None</span>}</td>
                  <td>
                    <When at={template.updatedAt} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {list && list.nodes.length === 0 && <p className="muted">{q ? 'No template matches this search.' : 'No templates yet: create one to upload its document.'}</p>}
      {list && (cursors.length > 1 || list.hasMore) && (
        <nav aria-label="Pages of templates" className="tpl-pager">
          <Button className="button" isDisabled={cursors.length <= 1} onPress={() => setCursors((c) => c.slice(0, -1))}>
            Previous page
          </Button>
          <span className="muted">Page {cursors.length}</span>
          <Button className="button" isDisabled={!list.hasMore || !list.nextCursor} onPress={() => setCursors((c) => [...c, list.nextCursor ?? undefined])}>
            Next page
          </Button>
        </nav>
      )}
    </Page>
  );
}

const CREATE_FIELDS = ['/body/name', '/body/description'];

/** "New template": name and description, then the template's page to upload its document. */
function CreateTemplate() {
  const { rest } = useSession();
  const navigate = useNavigate();
  const [form, setForm] = useState({ name: '', description: '' });
  const action = useAction();
  return (
    <DialogButton label="New template" title="New template" variant="button button-primary">
      {(close) => (
        <Form
          onSubmit={(event) => {
            event.preventDefault();
            void action
              .run(() => unwrap(rest.POST('/v1/templates', { body: { name: form.name, ...(form.description ? { description: form.description } : {}) } })))
              .then((template) => {
                close();
                navigate(`/templates/${template.id}`);
              })
              .catch(() => undefined);
          }}
        >
          <Field label="Name" name="name" isRequired autoFocus value={form.name} onChange={(name) => setForm((f) => ({ ...f, name }))} error={action.error} pointer="/body/name" />
          <Field label="Description" name="description" multiline rows={3} value={form.description} onChange={(description) => setForm((f) => ({ ...f, description }))} error={action.error} pointer="/body/description" />
          <FormError error={action.error} fields={CREATE_FIELDS} />
          <div className="dialog-actions">
            <Button className="button" slot="close">
              Cancel
            </Button>
            <Button type="submit" className="button button-primary" isDisabled={action.busy}>
              Create template
            </Button>
          </div>
        </Form>
      )}
    </DialogButton>
  );
}
