import { useId, type ReactNode } from 'react';
import { Switch } from 'react-aria-components';
import { planRefusal } from '../../../api/plan.ts';
import { UpgradeNotice } from '../../../app/UpgradeNotice.tsx';
import { detailFor } from '../../developers/fields.tsx';

/**
 * A labelled on/off setting that shows, under it, the API's refusal of its pointer, or the plan's refusal when the
 * refusal names this switch's `feature` (enforcement needs `enforcedSso`); both describe the switch.
 */
export function SettingSwitch({ label, description, value, onChange, error, pointer, feature }: { label: string; description?: ReactNode; value: boolean; onChange: (value: boolean) => void; error: unknown; pointer: string; feature?: string }) {
  const id = useId();
  const detail = detailFor(error, pointer);
  const refusal = planRefusal(error);
  const refused = feature !== undefined && refusal !== undefined && refusal.feature === feature;
  const described = [description && `${id}-note`, (detail || refused) && `${id}-error`].filter(Boolean).join(' ');
  return (
    <div className="field">
      <Switch className="switch" isSelected={value} onChange={onChange} aria-describedby={described || undefined}>
        <div className="indicator" aria-hidden="true" />
        {label}
      </Switch>
      {description && (
        <p id={`${id}-note`} className="field-note">
          {description}
        </p>
      )}
      <div id={`${id}-error`}>
        {detail && (
          <p className="react-aria-FieldError" role="alert">
            {detail}
          </p>
        )}
        {refused && <UpgradeNotice refusal={refusal} />}
      </div>
    </div>
  );
}
