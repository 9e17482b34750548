import { useState } from 'react';
import { Checkbox, Form } from 'react-aria-components';
import type { components } from '@sigil/proto/api/sigil';
import { unwrap } from '../../api/rest.ts';
import { useSession } from '../../app/session.tsx';
import { ReadState, useRead } from './read.tsx';
import '../developers/developers.css';
import { BusyButton, Field, FormError, Page, useAction } from '@sigil/web-ui';

type EmailBranding = components['schemas']['EmailBranding'];

export default function Branding() {
  const { rest, can } = useSession();
  const read = useRead(() => unwrap(rest.GET('/v1/organization/email-branding')), can('org:manage'));
  return (
    <Page title="E-mail branding" description="How the e-mails Sigil sends to your recipients look.">
      <ReadState read={read} what="E-mail branding" permission="org:manage">
        {(branding) => <BrandingForm branding={branding} onSaved={read.reload} />}
      </ReadState>
      <OrganizationFeatures />
    </Page>
  );
}

const FIELDS = ['/body/displayName', '/body/customMessage', '/body/footer', '/body/removePoweredBy'];

/** The fields the contract fixes; footer and Powered-by removal only when the plan allows them (`allowed`). */
function BrandingForm({ branding, onSaved }: { branding: EmailBranding; onSaved: () => void }) {
  const { rest } = useSession();
  const [displayName, setDisplayName] = useState(branding.displayName ?? '');
  const [customMessage, setCustomMessage] = useState(branding.customMessage ?? '');
  const [footer, setFooter] = useState(branding.footer ?? '');
  const [removePoweredBy, setRemovePoweredBy] = useState(branding.removePoweredBy ?? false);
  const [saved, setSaved] = useState(false);
  const action = useAction();
  const allowed = branding.allowed;
  return (
    <Form
      onSubmit={(e) => {
        e.preventDefault();
        setSaved(false);
        const body = {
          displayName: displayName || null,
          customMessage: customMessage || null,
          ...(allowed.footer ? { footer: footer || null } : {}),
          ...(allowed.removePoweredBy ? { removePoweredBy } : {}),
        };
        void action.run(() => unwrap(rest.PUT('/v1/organization/email-branding', { body }))).then(() => {
          setSaved(true);
          onSaved();
        }, () => undefined);
      }}
    >
      <Field label="Sender name" value={displayName} onChange={setDisplayName} error={action.error} pointer="/body/displayName" description="The name recipients see the e-mails come from." />
      <Field label="Message to recipients" multiline value={customMessage} onChange={setCustomMessage} error={action.error} pointer="/body/customMessage" />
      {allowed.footer ? (
        <Field label="Footer" multiline rows={2} value={footer} onChange={setFooter} error={action.error} pointer="/body/footer" />
      ) : (
        <p className="muted">A custom footer needs a plan that allows it.</p>
      )}
      {allowed.removePoweredBy && (
        <Checkbox className="checkbox" isSelected={removePoweredBy} onChange={setRemovePoweredBy}>
          <span className="checkbox-box" aria-hidden="true" />
          Remove the “Powered by Sigil” line
        </Checkbox>
      )}
      <FormError error={action.error} fields={FIELDS} />
      <p role="status" className="muted">
        {saved ? 'Saved.' : ''}
      </p>
      <div className="row">
        <BusyButton type="submit" className="button button-primary" busy={action.busy}>
          Save branding
        </BusyButton>
      </div>
    </Form>
  );
}

/** The organization's feature flags (`GET /v1/organization/settings`), shown as they are. */
function OrganizationFeatures() {
  const { rest, can } = useSession();
  const read = useRead(() => unwrap(rest.GET('/v1/organization/settings')), can('org:manage'));
  return (
    <section aria-labelledby="features">
      <h2 id="features">Organization features</h2>
      <ReadState read={read} what="Organization settings" permission="org:manage">
        {(settings) => (
          <dl className="details panel">
            {Object.entries(settings.features).map(([name, value]) => (
              <div key={name} className="contents">
                <dt>{name}</dt>
                <dd>{typeof value === 'boolean' ? (value ? 'On' : 'Off') : JSON.stringify(value)}</dd>
              </div>
            ))}
          </dl>
        )}
      </ReadState>
    </section>
  );
}
