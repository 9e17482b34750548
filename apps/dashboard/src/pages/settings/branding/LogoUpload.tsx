import { useId, useState } from 'react';
import { BusyButton, FormError, useAction } from '@sigil/web-ui';
import { planRefusal } from '../../../api/plan.ts';
import { ApiError } from '../../../api/problem.ts';
import { unwrap } from '../../../api/rest.ts';
import { useSession } from '../../../app/session.tsx';
import { UpgradeNotice } from '../../../app/UpgradeNotice.tsx';
import { detailFor } from '../../developers/fields.tsx';

const ACCEPTED = 'image/png,image/jpeg,image/svg+xml,image/webp';

/** Why an upload was refused, beside the file input: the problem's own sentence (413, 415), else its detail for `file`. */
function refusalOf(error: unknown): string | undefined {
  if (!error) return undefined;
  if (!(error instanceof ApiError)) return error instanceof Error ? error.message : String(error);
  return error.problem.detail || detailFor(error, '/body/file') || error.problem.title;
}

/**
 * The organization's logo: the current one, a file input that uploads the chosen file at once
 * (`POST /v1/organization/logo`, multipart `file`; the API judges the file by its bytes and says why it refuses one
 * beside the input), and "Remove logo".
 */
export function LogoUpload({ logoUrl, allowed, onChanged }: { logoUrl: string | null | undefined; allowed: boolean; onChanged: () => void }) {
  const { rest } = useSession();
  const id = useId();
  const upload = useAction();
  const remove = useAction();
  const [uploaded, setUploaded] = useState<string>();
  const refusal = planRefusal(upload.error);
  const detail = refusal ? undefined : refusalOf(upload.error);

  async function send(file: File) {
    setUploaded(undefined);
    const form = new FormData();
    form.append('file', file);
    const logo = await upload.run(() => unwrap(rest.POST('/v1/organization/logo', { body: { file: '' }, bodySerializer: () => form }))).catch(() => undefined);
    if (!logo) return;
    setUploaded(file.name);
    onChanged();
  }

  return (
    <section aria-labelledby={`${id}-heading`} className="panel stack logo">
      <h2 id={`${id}-heading`}>Logo</h2>
      <div className="logo-current">
        {logoUrl ? <img src={logoUrl} alt="Your current logo" className="logo-image" /> : <p className="muted">No logo yet: e-mails and signing pages show your organization's name.</p>}
      </div>
      <div className="field">
        <label htmlFor={`${id}-file`}>Upload a logo</label>
        <input
          id={`${id}-file`}
          type="file"
          name="file"
          accept={ACCEPTED}
          disabled={!allowed}
          aria-invalid={detail ? true : undefined}
          aria-describedby={`${id}-hint ${id}-error`}
          onChange={(e) => {
            const file = e.currentTarget.files?.[0];
            e.currentTarget.value = '';
            if (file) void send(file);
          }}
        />
        <p id={`${id}-hint`} className="field-note">
          {allowed ? 'PNG, JPEG, SVG or WebP, at most 512 KB. It replaces the current logo at once.' : 'A logo is custom branding, which your plan does not include.'}
        </p>
        <div id={`${id}-error`}>
          {detail && (
            <p className="react-aria-FieldError" role="alert">
              {detail}
            </p>
          )}
        </div>
      </div>
      {refusal && <UpgradeNotice refusal={refusal} />}
      <p role="status" className="muted">
        {upload.busy ? 'Uploading…' : uploaded ? `Uploaded ${uploaded}.` : ''}
      </p>
      {logoUrl && (
        <div className="row">
          <BusyButton
            className="button"
            busy={remove.busy}
            busyLabel="Removing…"
            onPress={() => void remove.run(() => unwrap(rest.PUT('/v1/organization/email-branding', { body: { logoUrl: null } }))).then(onChanged, () => undefined)}
          >
            Remove logo
          </BusyButton>
        </div>
      )}
      <FormError error={remove.error} />
    </section>
  );
}
