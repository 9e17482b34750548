import { useEffect, useRef } from 'react';
import { When } from '@sigil/web-ui';
import type { DryRunResult } from './sendForm.ts';

/**
 * What sending would do now, as the API's dry run answered it: nothing was created or sent yet. Each new result takes
 * the focus, so the keyboard goes on from here to "Send envelope".
 */
export function DryRunReview({ result, stale }: { result: DryRunResult; stale: boolean }) {
  const headingRef = useRef<HTMLHeadingElement>(null);
  useEffect(() => headingRef.current?.focus(), [result]);
  const first = result.wouldSend ?? [];
  return (
    <section className="env-review" aria-labelledby="env-review-title">
      <h2 id="env-review-title" ref={headingRef} tabIndex={-1}>
        Dry run: ready to send
      </h2>
      {stale && (
        <p className="alert alert-info" role="status">
          The form changed after this dry run: run it again before sending.
        </p>
      )}
      <p>
        {result.testMode ? 'A test envelope' : 'A live envelope'} of {result.pageCount} {result.pageCount === 1 ? 'page' : 'pages'} (template version {result.templateVersion}), expiring{' '}
        <When at={result.expiresAt} />.
      </p>
      {first.length > 0 && (
        <>
          <p>Sending now:</p>
          <ul>
            {first.map((s) => (
              <li key={s.role}>
                {s.via === 'embedded' ? `${s.email} (${s.role}) signs embedded: create their signing link on the envelope's page` : `${s.email} (${s.role}) is e-mailed a signing link`}
              </li>
            ))}
          </ul>
        </>
      )}
      {result.recipients && result.recipients.some((r) => !r.firstTurn) && (
        <p>
          Then, in order:{' '}
          {result.recipients
            .filter((r) => !r.firstTurn)
            .map((r) => `${r.name} (${r.role}, order ${r.order})`)
            .join(', ')}
          .
        </p>
      )}
      {result.testMode && <p className="muted">Test mode: nothing is sent for real. E-mails go only to members of your organization; others are recorded as not sent. Every page is stamped TEST.</p>}
    </section>
  );
}
