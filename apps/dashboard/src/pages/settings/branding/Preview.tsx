import { useEffect, useMemo, useState } from 'react';
import type { components } from '@sigil/proto/api/sigil';
import { FormError } from '@sigil/web-ui';
import { planRefusal } from '../../../api/plan.ts';
import { unwrap } from '../../../api/rest.ts';
import { useSession } from '../../../app/session.tsx';
import { UpgradeNotice } from '../../../app/UpgradeNotice.tsx';
import { pageStyleNonce, previewDocument } from './previewDocument.ts';

type Fields = components['schemas']['EmailBrandingFields'];
type EmailPreview = components['schemas']['EmailBrandingPreview'];

/** Typing pauses this long before the preview is asked for again. */
const DEBOUNCE_MS = 400;

/**
 * A sample e-mail as recipients would get it with the unsaved `fields` (`POST /v1/organization/email-branding/preview`,
 * asked again when they stop changing), in a sandboxed frame.
 */
export function Preview({ fields, logoUrl }: { fields: Fields; logoUrl: string | null | undefined }) {
  const { rest } = useSession();
  const [preview, setPreview] = useState<EmailPreview>();
  const [error, setError] = useState<unknown>();
  const [updating, setUpdating] = useState(false);
  // One key for what the preview depends on; a new logo changes the e-mail too.
  const key = JSON.stringify([fields, logoUrl]);

  useEffect(() => {
    let current = true;
    setUpdating(true);
    const timer = setTimeout(() => {
      unwrap(rest.POST('/v1/organization/email-branding/preview', { body: { branding: JSON.parse(key)[0] as Fields } })).then(
        (answer) => {
          if (!current) return;
          setPreview(answer);
          setError(undefined);
          setUpdating(false);
        },
        (e: unknown) => {
          if (!current) return;
          setError(e);
          setUpdating(false);
        },
      );
    }, DEBOUNCE_MS);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [key, rest]);

  const srcDoc = useMemo(() => (preview ? previewDocument(preview.html, pageStyleNonce()) : undefined), [preview]);
  const refusal = planRefusal(error);
  return (
    <section aria-labelledby="preview-heading" className="preview stack">
      <h2 id="preview-heading">Preview</h2>
      <p className="muted small" role="status">
        {updating ? 'Loading the preview…' : preview ? 'A signing request as your recipients will get it, with the settings above (saved or not).' : ''}
      </p>
      {refusal ? <UpgradeNotice refusal={refusal} /> : <FormError error={error} />}
      {preview && (
        <div className="preview-mail">
          <dl className="preview-headers">
            {typeof preview.fromName === 'string' && (
              <>
                <dt>From</dt>
                <dd>{preview.fromName}</dd>
              </>
            )}
            <dt>Subject</dt>
            <dd>{preview.subject}</dd>
          </dl>
          <iframe title="E-mail preview" sandbox="" srcDoc={srcDoc} className="preview-frame" />
        </div>
      )}
    </section>
  );
}
