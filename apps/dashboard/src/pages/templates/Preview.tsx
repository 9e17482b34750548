import { useState } from 'react';
import { Button, Form } from 'react-aria-components';
import { BusyButton, Field, FormError, useAction } from '@sigil/web-ui';
import { unwrap } from '../../api/rest.ts';
import { useSession } from '../../app/session.tsx';
import {SelectField } from './editor/controls.tsx';
import { PdfPages } from './editor/PdfPages.tsx';
import { openPdfInTab } from './Versions.tsx';

interface PreviewVersion {
  version: string;
  variables: readonly { name: string; required: boolean }[];
}

/** Published versions newest first (by number, whatever order they came in), then the draft. */
function newestFirst<V extends PreviewVersion>(versions: readonly V[]): V[] {
  const number = (v: V) => (v.version === 'draft' ? -1 : Number(v.version));
  return [...versions].sort((a, b) => number(b) - number(a));
}

/**
 * A preview with variables filled: POST /versions/{version}/render (the contract's RenderPreview), shown as the
 * rendered PDF (PREVIEW on every page, TEST under it in test mode). Each variable's refusal shows beside its input.
 * It previews the latest published version (the draft when nothing is published) unless the person picks another;
 * a version published after that pick makes the latest the one shown again.
 */
export function Preview({ templateId, versions }: { templateId: string; versions: readonly PreviewVersion[] }) {
  const { rest } = useSession();
  const ordered = newestFirst(versions);
  const latest = ordered[0];
  const [pick, setPick] = useState<{ version: string; latestThen?: string }>();
  const [values, setValues] = useState<Record<string, string>>({});
  const [rendered, setRendered] = useState<{ bytes: ArrayBuffer; key: string; version: string }>();
  const action = useAction();
  const picked = pick && pick.latestThen === latest?.version ? ordered.find((v) => v.version === pick.version) : undefined;
  const version = picked ?? latest;
  if (!version) return null;
  const pointers = version.variables.map((v) => `/body/variables/${v.name}`);
  const nameOf = (v: PreviewVersion) => (v.version === 'draft' ? 'Draft (as saved)' : `Version ${v.version}${v === latest ? ' (latest)' : ''}`);

  async function render() {
    if (!version || action.busy) return;
    const variables = Object.fromEntries(version.variables.filter((v) => values[v.name]).map((v) => [v.name, values[v.name]]));
    const bytes = (await action.run(() =>
      unwrap(rest.POST('/v1/templates/{id}/versions/{version}/render', { params: { path: { id: templateId, version: version.version } }, body: { variables }, parseAs: 'arrayBuffer' })),
    )) as ArrayBuffer;
    setRendered({ bytes, key: `${version.version}:${Date.now()}`, version: nameOf(version) });
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
        <SelectField label="Version to preview" value={version.version} options={ordered.map((v) => ({ value: v.version, label: nameOf(v) }))} onChange={(chosen) => setPick({ version: chosen, latestThen: latest?.version })} />
        {version.variables.map((v) => (
          <Field key={v.name} label={`${v.name}${v.required ? ' (required)' : ''}`} value={values[v.name] ?? ''} onChange={(value) => setValues((all) => ({ ...all, [v.name]: value }))} error={action.error} pointer={`/body/variables/${v.name}`} />
        ))}
        {version.variables.length === 0 && <p className="muted">This version has no variables.</p>}
        <FormError error={action.error} fields={pointers} />
        <div className="tpl-actions">
          <BusyButton type="submit" className="button button-primary" busy={action.busy} busyLabel="Rendering the preview…">
            Show preview
          </BusyButton>
          {rendered && (
            <Button className="button" onPress={() => openPdfInTab(rendered.bytes)}>
              Open preview PDF
            </Button>
          )}
        </div>
      </Form>
      {rendered && (
        <>
          <p className="muted">Shown: {rendered.version}, with the values above.</p>
          <PdfPages label={`Preview pages of ${rendered.version.toLowerCase()}`} load={() => Promise.resolve(rendered.bytes.slice(0))} documentKey={rendered.key} />
        </>
      )}
    </section>
  );
}
