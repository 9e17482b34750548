import { useState } from 'react';
import { Button } from 'react-aria-components';
import { CopyButton, FormError, StatusBadge, useAction, When } from '@sigil/web-ui';
import { unwrap } from '../../api/rest.ts';
import { useSession } from '../../app/session.tsx';

interface RecipientRow {
  id: string;
  role: string;
  name: string;
  email: string;
  order: number;
  delivery: string;
  verification: string;
  status: string;
  hasTurn: boolean;
  sentAt?: string | null;
  completedAt?: string | null;
  declinedAt?: string | null;
}

const VERIFICATION_WORDS: Record<string, string> = { none: 'no verification', email: 'code by e-mail', sms: 'code by SMS' };

/** E-mails the recipient a fresh signing link (only on their turn; the API allows one a minute). */
function ResendButton({ envelopeId, recipient }: { envelopeId: string; recipient: RecipientRow }) {
  const { rest } = useSession();
  const action = useAction();
  const [done, setDone] = useState(false);
  return (
    <div>
      <Button
        className="button"
        isDisabled={action.busy}
        onPress={() =>
          action
            .run(() => unwrap(rest.POST('/v1/envelopes/{id}/recipients/{recipient}/resend', { params: { path: { id: envelopeId, recipient: recipient.id } } })))
            .then(() => setDone(true))
            .catch(() => setDone(false))
        }
      >
        Resend to {recipient.name}
      </Button>
      <span role="status" className="muted small">
        {done ? ` A new link was sent to ${recipient.email}.` : ''}
      </span>
      <FormError error={action.error} />
    </div>
  );
}

/** For a recipient who signs embedded: a short-lived, single-use link to the hosted signing page, to hand to them. */
function SigningLinkButton({ envelopeId, recipient }: { envelopeId: string; recipient: RecipientRow }) {
  const { rest } = useSession();
  const action = useAction();
  const [session, setSession] = useState<{ url?: string; expiresAt: string }>();
  return (
    <div>
      <Button
        className="button"
        isDisabled={action.busy}
        onPress={() => action.run(() => unwrap(rest.POST('/v1/envelopes/{id}/sessions', { params: { path: { id: envelopeId } }, body: { recipient: recipient.id } }))).then(setSession, () => setSession(undefined))}
      >
        Signing link for {recipient.name}
      </Button>
      {session?.url && (
        <div className="secret" role="group" aria-label={`Signing link for ${recipient.name}`}>
          <code className="env-hash">{session.url}</code>
          <CopyButton text={session.url} label="Copy signing link" />
          <span className="muted small">
            Works once, until <When at={session.expiresAt} />.
          </span>
        </div>
      )}
      <FormError error={action.error} />
    </div>
  );
}

/** The recipients in signing order (equal orders sign together), where each stands, and whose turn it is. */
export function Recipients({ envelopeId, recipients, envelopeStatus }: { envelopeId: string; recipients: readonly RecipientRow[]; envelopeStatus: string }) {
  const { can } = useSession();
  const waitingOn = recipients.filter((r) => r.hasTurn).map((r) => r.name);
  return (
    <section aria-labelledby="env-recipients">
      <h2 id="env-recipients">Recipients</h2>
      <p role="status">
        {waitingOn.length > 0 ? `Waiting on ${waitingOn.join(' and ')}.` : envelopeStatus === 'rendering' ? 'The document is being prepared; the first recipients get their turn next.' : 'Nobody has a turn now.'}
      </p>
      <div className="table-wrap" role="region" aria-label="Recipients table" tabIndex={0}>
        <table className="table">
          <caption className="visually-hidden">Recipients in signing order</caption>
          <thead>
            <tr>
              <th scope="col">Order</th>
              <th scope="col">Recipient</th>
              <th scope="col">Role</th>
              <th scope="col">Delivery</th>
              <th scope="col">Status</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {recipients.map((r) => (
              <tr key={r.id}>
                <td>{r.order}</td>
                <td>
                  {r.name}
                  <div className="muted small">{r.email}</div>
                </td>
                <td>{r.role}</td>
                <td>
                  {r.delivery === 'embedded' ? 'Embedded' : 'E-mail'}
                  <div className="muted small">{VERIFICATION_WORDS[r.verification] ?? r.verification}</div>
                </td>
                <td>
                  <StatusBadge status={r.hasTurn ? 'their_turn' : r.status} />
                  <div className="muted small">
                    {r.completedAt ? <>signed <When at={r.completedAt} /></> : r.declinedAt ? <>declined <When at={r.declinedAt} /></> : r.hasTurn && r.sentAt ? <>since <When at={r.sentAt} /></> : null}
                  </div>
                </td>
                <td>
                  <div className="env-actions-cell">
                    {r.hasTurn && can('envelope:send') && r.delivery === 'email' && <ResendButton envelopeId={envelopeId} recipient={r} />}
                    {r.hasTurn && can('envelope:send') && r.delivery === 'embedded' && <SigningLinkButton envelopeId={envelopeId} recipient={r} />}
                  </div>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
