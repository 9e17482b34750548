import { useState } from 'react';
import { Button } from 'react-aria-components';
import { FormError, When } from '@sigil/web-ui';
import { unwrap } from '../../api/rest.ts';
import { useSession } from '../../app/session.tsx';

export interface VersionRow {
  version: string;
  pageCount?: number | null;
  fields: readonly unknown[];
  roles: readonly { name: string }[];
  createdAt: string;
  publishedAt?: string | null;
}

/** Reads a version's PDF (GET /versions/{version}/document) as bytes; `edited` draws a draft's fields on it. */
export function useVersionDocument(templateId: string) {
  const { rest } = useSession();
  return (version: string, edited = false) =>
    unwrap(rest.GET('/v1/templates/{id}/versions/{version}/document', { params: { path: { id: templateId, version }, query: edited ? { edited: true } : {} }, parseAs: 'arrayBuffer' })) as Promise<ArrayBuffer>;
}

/** Opens PDF bytes in a new tab (a blob: URL, which the CSP allows, revoked once the tab has it). */
export function openPdfInTab(bytes: ArrayBuffer) {
  const url = URL.createObjectURL(new Blob([bytes], { type: 'application/pdf' }));
  window.open(url, '_blank', 'noopener');
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/** The published versions, newest first, each with its frozen PDF; and the draft's PDF with its fields drawn. */
export function Versions({ templateId, versions }: { templateId: string; versions: readonly VersionRow[] }) {
  const documentOf = useVersionDocument(templateId);
  const [error, setError] = useState<unknown>();
  const open = (version: string, edited?: boolean) => {
    setError(undefined);
    documentOf(version, edited).then(openPdfInTab, setError);
  };
  return (
    <section aria-labelledby="tpl-versions-heading" className="tpl-section">
      <h2 id="tpl-versions-heading">Versions</h2>
      {versions.length === 0 ? (
        <p className="muted">Nothing published yet: publish the draft to make version 1, the one envelopes use.</p>
      ) : (
        <div className="table-wrap">
          <table className="table">
            <thead>
              <tr>
                <th scope="col">Version</th>
                <th scope="col">Pages</th>
                <th scope="col">Roles</th>
                <th scope="col">Fields</th>
                <th scope="col">Published</th>
                <th scope="col">Document</th>
              </tr>
            </thead>
            <tbody>
              {versions.map((v) => (
                <tr key={v.version}>
                  <td>{v.version === 'draft' ? 'Draft' : `Version ${v.version}`}</td>
                  <td>{v.pageCount ?? '—'}</td>
                  <td>{v.roles.map((r) => r.name).join(', ') || '—'}</td>
                  <td>{v.fields.length}</td>
                  <td>{v.publishedAt ? <When at={v.publishedAt} /> : <span className="muted">Not published</span>}</td>
                  <td>
                    <Button className="button button-quiet" onPress={() => open(v.version, v.version === 'draft')} aria-label={v.version === 'draft' ? 'Open PDF of the draft, its fields drawn' : `Open PDF of version ${v.version}`}>
                      Open PDF
                    </Button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <FormError error={error} />
    </section>
  );
}
