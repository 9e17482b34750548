import { useState } from 'react';
import { FieldError, Input, Label, Text, TextField } from 'react-aria-components';
import { BusyButton, Field, useAction, When } from '@sigil/web-ui';
import { ApiError } from '../../../api/problem.ts';
import { unwrap } from '../../../api/rest.ts';
import { useSession } from '../../../app/session.tsx';
import { detailFor } from '../../developers/fields.tsx';

export interface Metadata {
  url: string;
  xml: string;
  /** Which one the connection is saved from: the URL (fetched again by the API, which keeps it) or the XML as edited. */
  source: 'url' | 'xml';
}

interface Fetched {
  entityId?: string;
  ssoUrl?: string | null;
  certificateExpiresAt?: string | null;
}

/** Why a fetch failed, for the URL field: the detail for its pointer, else the problem's own (a refused address). */
function fetchDetail(error: unknown): string | undefined {
  if (!(error instanceof ApiError)) return error ? String(error instanceof Error ? error.message : error) : undefined;
  return detailFor(error, '/body/url') ?? error.problem.detail ?? error.problem.title;
}

/**
 * The identity provider's SAML metadata: its URL, which "Fetch" reads server-side (`POST /v1/sso/saml-metadata`; a
 * refused address says why under the field) into the XML field, or the XML pasted. The connection is saved from the
 * URL when the XML is the one fetched from it (or there is none), else from the XML as pasted or edited.
 */
export function MetadataFields({ value, onChange, error }: { value: Metadata; onChange: (value: Metadata) => void; error: unknown }) {
  const { rest } = useSession();
  const fetching = useAction();
  const [fetched, setFetched] = useState<Fetched>();
  const urlDetail = fetchDetail(fetching.error) ?? detailFor(error, '/body/metadataUrl');

  async function fetchMetadata() {
    setFetched(undefined);
    const metadata = await fetching.run(() => unwrap(rest.POST('/v1/sso/saml-metadata', { body: { url: value.url.trim() } }))).catch(() => undefined);
    if (!metadata) return;
    onChange({ ...value, xml: metadata.xml, source: 'url' });
    setFetched(metadata);
  }

  return (
    <fieldset className="fieldset">
      <legend>Identity provider metadata</legend>
      <div className="field-with-action">
        <TextField className="field" type="url" name="metadataUrl" value={value.url} onChange={(url) => {
            setFetched(undefined);
            onChange({ ...value, url, source: value.xml.trim() && value.source === 'xml' ? 'xml' : 'url' });
          }} isInvalid={urlDetail !== undefined} validationBehavior="aria">
          <Label>Metadata URL</Label>
          <Input
            onKeyDown={(e) => {
              // Enter in the URL fetches it (the form's own submit needs the metadata first).
              if (e.key === 'Enter' && value.url.trim() && value.source === 'url' && !fetched) {
                e.preventDefault();
                void fetchMetadata();
              }
            }}
          />
          <Text slot="description">The address your identity provider publishes its SAML metadata at.</Text>
          <FieldError>{urlDetail}</FieldError>
        </TextField>
        <BusyButton className="button" busy={fetching.busy} busyLabel="Fetching…" onPress={() => void fetchMetadata()}>
          Fetch
        </BusyButton>
      </div>
      {fetched && (
        <p className="alert alert-success" role="status">
          Fetched the metadata of <code>{fetched.entityId ?? 'the identity provider'}</code>
          {fetched.certificateExpiresAt && (
            <>
              ; its signing certificate expires <When at={fetched.certificateExpiresAt} />
            </>
          )}
          .
        </p>
      )}
      <Field label="Metadata XML" name="metadataXml" multiline rows={5} value={value.xml} onChange={(xml) => onChange({ ...value, xml, source: 'xml' })} error={error} pointer="/body/metadataXml" description="Fetched from the URL above, or pasted from your identity provider." />
    </fieldset>
  );
}
