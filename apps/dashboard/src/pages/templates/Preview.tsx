import { useState } from 'react';
import { Button, Form } from 'react-aria-components';
import { unwrap } from '../../api/rest.ts';
import { useAction } from '../../api/useAction.ts';
import { useSession } from '../../app/session.tsx';
import { Field, FormError } from '../../components/Form.tsx';
import { SelectField } from './editor/controls.tsx';
import { PdfPages } from './editor/PdfPages.tsx';
import { openPdfInTab } from './Versions.tsx';

interface PreviewVersion {
  version: string;
  variables: readonly { name: string; required: boolean }[];
}

/**
 * A preview with variables filled: POST /versions/{version}/render (the contract's RenderPreview), shown as the
 * rendered PDF (PREVIEW on every page, TEST under it in test mode). Each variable's refusal shows beside its input.
 */
export function Preview({ templateId, versions }: { templateId: string; versions: readonly PreviewVersion[] }) {
  const { rest } = useSession();
  const [chosen, setChosen] = useState(versions[0]?.version ?? 'draft');
  const [values, setValues] = useState<Record<string, string>>({});
  const [rendered, setRendered] = useState<{ bytes: ArrayBuffer; key: string }>();
  const action = useAction();
  const version = versions.find((v) => v.version === chosen) ?? versions[0];
  if (!version) return null;
  const pointers = version.variables.map((v) => `/body/variables/${v.name}`);

  async function render() {
    if (!version) return;
    const variables = Object.fromEntries(version.variables.filter((v) => values[v.name]).map((v) => [v.name, values[v.name]]));
    const bytes = (await action.run(() =>
      unwrap(rest.POST('/v1/templates/{id}/versions/{version}/render', { params: { path: { id: templateId, version: version.version } }, body: { variables }, parseAs: 'arrayBuffer' })),
    )) as ArrayBuffer;
    setRendered({ bytes, key: `${version.version}:${Date.now()}` });
  }

  return (
    <section aria-labelledby="tpl-preview-heading" className="tpl-section">
      <h2 id="tpl-preview-heading">Preview</h2>
      <Form
        className="tpl-preview-form"
        onSubmit={(event) => {
          event.preventDefault();
          render().catch(() => undefined);
        }}
      >
        <SelectField label="Version to preview" value={version.version} options={versions.map((v) => ({ value: v.version, label: v.version === 'draft' ? 'Draft (as saved)' : `Version ${v.version}` }))} onChange={setChosen} />
        {version.variables.map((v) => (
          <Field key={v.name} label={`${v.name}${v.required ? ' (required)' : ''}`} value={values[v.name] ?? ''} onChange={(value) => setValues((all) => ({ ...all, [v.name]: value }))} error={action.error} pointer={`/body/variables/${v.name}`} />
        ))}
        {version.variables.length === 0 && <p className="muted">This version has no variables.</p>}
        <FormError error={action.error} fields={pointers} />
        <div className="tpl-actions">
          <Button type="submit" className="button button-primary" isDisabled={action.busy}>
            Show preview
          </Button>
          {rendered && (
            <Button className="button" onPress={() => openPdfInTab(rendered.bytes)}>
              Open preview PDF
            </Button>
          )}
        </div>
      </Form>
      {rendered && <PdfPages label="Preview pages" load={() => Promise.resolve(rendered.bytes.slice(0))} documentKey={rendered.key} />}
    </section>
  );
}
