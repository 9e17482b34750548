import { useState } from 'react';
import { Button, Checkbox, Form } from 'react-aria-components';
import { BusyButton, ConfirmButton, DialogButton, Field, FormError, StatusBadge, useAction, When } from '@sigil/web-ui';
import { planRefusal } from '../../api/plan.ts';
import { unwrap } from '../../api/rest.ts';
import { UpgradeNotice } from '../../app/UpgradeNotice.tsx';
import { useSession } from '../../app/session.tsx';
import '../developers/developers.css';

export interface ViewerRow {
  id: string;
  email: string;
  name?: string | null;
  documentAccess: boolean;
  createdAt: string;
  firstOpenedAt?: string | null;
  revokedAt?: string | null;
}

/** Viewers may be added while the envelope is in progress (the API answers 409 otherwise). */
const IN_PROGRESS = ['rendering', 'sent'];

const FIELDS = ['/body/viewers/0/name', '/body/viewers/0/email', '/body/viewers/0/documentAccess'];

/**
 * Who follows the envelope on a read-only status page: when each first opened it, whether they may see the document;
 * add one (the API e-mails them the link at once), revoke one (every link of theirs stops working).
 */
export function Viewers({ envelopeId, envelopeStatus, viewers, onChanged }: { envelopeId: string; envelopeStatus: string; viewers: readonly ViewerRow[]; onChanged: () => void }) {
  const { can } = useSession();
  const mayChange = can('envelope:send');
  const active = viewers.filter((v) => !v.revokedAt).length;
  return (
    <section aria-labelledby="env-viewers">
      <div className="env-section-head">
        <h2 id="env-viewers">Viewers</h2>
        {mayChange && IN_PROGRESS.includes(envelopeStatus) && (
          <DialogButton label="Add a viewer" title="Add a viewer">
            {(close) => <AddViewer envelopeId={envelopeId} close={close} onAdded={onChanged} />}
          </DialogButton>
        )}
      </div>
      <p className="muted">
        {viewers.length === 0
          ? 'Nobody follows this envelope yet. A viewer gets a read-only status page by e-mail and sees it update as people sign.'
          : `${active} ${active === 1 ? 'viewer follows' : 'viewers follow'} this envelope on a read-only status page.`}
      </p>
      {viewers.length > 0 && (
        <div className="table-wrap" role="region" aria-label="Viewers table" tabIndex={0}>
          <table className="table env-viewers">
            <caption className="visually-hidden">Viewers of this envelope, in the order they were added</caption>
            <thead>
              <tr>
                <th scope="col">Viewer</th>
                <th scope="col">Document</th>
                <th scope="col">First opened</th>
                <th scope="col">Access</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {viewers.map((viewer) => (
                <tr key={viewer.id}>
                  <td>
                    {viewer.name ?? viewer.email}
                    {viewer.name && <div className="muted small">{viewer.email}</div>}
                    <div className="muted small env-phone-only">
                      {viewer.documentAccess ? 'Can see the document' : 'Status only'}
                    </div>
                  </td>
                  <td>{viewer.documentAccess ? 'Can see the document' : 'Status only'}</td>
                  <td>{viewer.firstOpenedAt ? <When at={viewer.firstOpenedAt} /> : <span className="muted">Not opened yet</span>}</td>
                  <td>
                    <StatusBadge status={viewer.revokedAt ? 'revoked' : 'active'} />
                    {viewer.revokedAt && (
                      <div className="muted small">
                        <When at={viewer.revokedAt} />
                      </div>
                    )}
                  </td>
                  <td>{mayChange && !viewer.revokedAt && <RevokeViewer envelopeId={envelopeId} viewer={viewer} onRevoked={onChanged} />}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

/** The "Add a viewer" dialog: name, e-mail, document access; each refusal beside its field, a plan's with the way to upgrade. */
function AddViewer({ envelopeId, close, onAdded }: { envelopeId: string; close: () => void; onAdded: () => void }) {
  const { rest } = useSession();
  const [name, setName] = useState('');
  const [email, setEmail] = useState('');
  const [documentAccess, setDocumentAccess] = useState(false);
  const action = useAction();
  const refusal = planRefusal(action.error);
  const accessRefused = refusal?.feature === 'viewerDocumentAccess';
  return (
    <Form
      className="stack"
      onSubmit={(e) => {
        e.preventDefault();
        const viewer = { email: email.trim(), documentAccess, ...(name.trim() ? { name: name.trim() } : {}) };
        void action
          .run(() => unwrap(rest.POST('/v1/envelopes/{id}/viewers', { params: { path: { id: envelopeId } }, body: { viewers: [viewer] } })))
          .then(() => {
            onAdded();
            close();
          })
          .catch(() => undefined);
      }}
    >
      <p className="muted">They get an e-mail at once with a link to a read-only page showing who has signed, updated live.</p>
      <Field label="Name" name="name" autoComplete="off" value={name} onChange={setName} maxLength={200} error={action.error} pointer="/body/viewers/0/name" autoFocus />
      <Field label="E-mail" type="email" name="email" autoComplete="off" isRequired value={email} onChange={setEmail} maxLength={254} error={action.error} pointer="/body/viewers/0/email" />
      <Checkbox className="checkbox" isSelected={documentAccess} onChange={setDocumentAccess} isInvalid={accessRefused} validationBehavior="aria" aria-describedby={accessRefused ? 'viewer-access-refused' : 'viewer-access-hint'}>
        <span className="checkbox-box" aria-hidden="true" />
        Can see the document
      </Checkbox>
      <p id="viewer-access-hint" className="muted small env-checkbox-hint">
        The document as it is now, and the sealed PDF once everyone has signed.
      </p>
      {accessRefused && refusal && (
        <div id="viewer-access-refused">
          <UpgradeNotice refusal={refusal} />
        </div>
      )}
      {refusal && !accessRefused && <UpgradeNotice refusal={refusal} />}
      {!refusal && <FormError error={action.error} fields={FIELDS} />}
      <div className="dialog-actions">
        <Button className="button" onPress={close}>
          Cancel
        </Button>
        <BusyButton type="submit" className="button button-primary" busy={action.busy} busyLabel="Adding…">
          Add viewer
        </BusyButton>
      </div>
    </Form>
  );
}

function RevokeViewer({ envelopeId, viewer, onRevoked }: { envelopeId: string; viewer: ViewerRow; onRevoked: () => void }) {
  const { rest } = useSession();
  const action = useAction();
  const who = viewer.name ?? viewer.email;
  return (
    <ConfirmButton
      label="Revoke access"
      title={`Revoke ${who}'s access?`}
      confirmLabel="Revoke access"
      description={<p>Every status link sent to {viewer.email} stops working at once, and a page they have open loses access. You can add them again later.</p>}
      error={<FormError error={action.error} />}
      onConfirm={async () => {
        await action.run(() => unwrap(rest.DELETE('/v1/envelopes/{id}/viewers/{viewer}', { params: { path: { id: envelopeId, viewer: viewer.id } } })));
        onRevoked();
      }}
    />
  );
}
