import { useState } from 'react';
import { Checkbox, Form } from 'react-aria-components';
import type { components } from '@sigil/proto/api/sigil';
import { BusyButton, Field, FormError, Page, useAction } from '@sigil/web-ui';
import { planRefusal } from '../../api/plan.ts';
import { unwrap } from '../../api/rest.ts';
import { useSession } from '../../app/session.tsx';
import { UpgradeNotice } from '../../app/UpgradeNotice.tsx';
import { LogoUpload } from './branding/LogoUpload.tsx';
import { featureValue, featureWords, NotOnPlan } from './features.tsx';
import { Preview } from './branding/Preview.tsx';
import { ReadState, useRead } from './read.tsx';
import '../developers/developers.css';
import './sso/sso.css';
import './branding/branding.css';

type EmailBranding = components['schemas']['EmailBranding'];
type Fields = components['schemas']['EmailBrandingFields'];

export default function Branding() {
  const { rest, can } = useSession();
  const read = useRead(() => unwrap(rest.GET('/v1/organization/email-branding')), can('org:manage'));
  return (
    <Page title="E-mail branding" description="How the e-mails Sigil sends to your recipients look: the sender's name, your message, your footer and your logo.">
      <ReadState read={read} what="E-mail branding" permission="org:manage">
        {(branding) => <BrandingEditor branding={branding} onSaved={read.reload} />}
      </ReadState>
      <OrganizationFeatures />
    </Page>
  );
}

const FIELDS = ['/body/displayName', '/body/customMessage', '/body/footer', '/body/removePoweredBy'];

/** What the plan does not allow, in the form's words (the API's `allowed`; it refuses those fields itself too). */
const NOT_ALLOWED = 'Not on your plan.';

/**
 * The fields, their live preview beside them (the unsaved values), and the logo. Only what the plan allows is sent,
 * to the preview and to "Save branding".
 */
function BrandingEditor({ branding, onSaved }: { branding: EmailBranding; onSaved: () => void }) {
  const { rest } = useSession();
  const allowed = branding.allowed;
  const [displayName, setDisplayName] = useState(branding.displayName ?? '');
  const [customMessage, setCustomMessage] = useState(branding.customMessage ?? '');
  const [footer, setFooter] = useState(branding.footer ?? '');
  const [removePoweredBy, setRemovePoweredBy] = useState(branding.removePoweredBy ?? false);
  const [saved, setSaved] = useState(false);
  const action = useAction();
  const refusal = planRefusal(action.error);
  const fields: Fields = {
    ...(allowed.custom ? { displayName: displayName || null, customMessage: customMessage || null } : {}),
    ...(allowed.footer ? { footer: footer || null } : {}),
    ...(allowed.removePoweredBy ? { removePoweredBy } : {}),
  };
  return (
    <div className="branding">
      <div className="branding-settings stack">
        {!allowed.custom && <NotOnPlan what="Custom branding" />}
        <Form
          aria-label="E-mail branding"
          onSubmit={(e) => {
            e.preventDefault();
            setSaved(false);
            void action.run(() => unwrap(rest.PUT('/v1/organization/email-branding', { body: fields }))).then(() => {
              setSaved(true);
              onSaved();
            }, () => undefined);
          }}
        >
          <Field label="Sender name" value={displayName} onChange={setDisplayName} isDisabled={!allowed.custom} error={action.error} pointer="/body/displayName" description={allowed.custom ? 'The name recipients see the e-mails come from.' : NOT_ALLOWED} />
          <Field label="Message to recipients" multiline value={customMessage} onChange={setCustomMessage} isDisabled={!allowed.custom} error={action.error} pointer="/body/customMessage" description={allowed.custom ? 'Shown in signing requests and reminders, above the button.' : NOT_ALLOWED} />
          <Field label="Footer" multiline rows={2} value={footer} onChange={setFooter} isDisabled={!allowed.footer} error={action.error} pointer="/body/footer" description={allowed.footer ? 'At the bottom of every e-mail: your address, a legal note.' : NOT_ALLOWED} />
          <div className="field">
            <Checkbox className="checkbox" isSelected={removePoweredBy} onChange={setRemovePoweredBy} isDisabled={!allowed.removePoweredBy} aria-describedby="powered-by-note">
              <span className="checkbox-box" aria-hidden="true" />
              Remove the “Powered by Sigil” line
            </Checkbox>
            <p id="powered-by-note" className="field-note">
              {allowed.removePoweredBy ? 'E-mails then carry no mention of Sigil.' : 'Needs white-labelling, which your plan does not include.'}
            </p>
          </div>
          {refusal ? <UpgradeNotice refusal={refusal} /> : <FormError error={action.error} fields={FIELDS} />}
          <p role="status" className="muted">
            {saved ? 'Saved: your e-mails use it from now on.' : ''}
          </p>
          <div className="row">
            <BusyButton type="submit" className="button button-primary" busy={action.busy}>
              Save branding
            </BusyButton>
          </div>
        </Form>
        <LogoUpload logoUrl={branding.logoUrl} allowed={allowed.custom !== false} onChanged={onSaved} />
      </div>
      <Preview fields={fields} logoUrl={branding.logoUrl} />
    </div>
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
                <dt>{featureWords(name)}</dt>
                <dd>{featureValue(value)}</dd>
              </div>
            ))}
          </dl>
        )}
      </ReadState>
    </section>
  );
}
