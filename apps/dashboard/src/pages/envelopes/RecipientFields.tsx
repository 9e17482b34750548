import { Button } from 'react-aria-components';
import { Field } from '@sigil/web-ui';
import { NumberInput, SelectField } from './controls.tsx';
import { DELIVERIES, VERIFICATIONS, type CcDraft, type Delivery, type RecipientDraft, type Verification } from './sendForm.ts';

const options = (words: Record<string, string>) => Object.entries(words).map(([id, label]) => ({ id, label }));
const DELIVERY_OPTIONS = options(DELIVERIES);
const VERIFICATION_OPTIONS = options(VERIFICATIONS);

/**
 * One signer (one role of the template): labels name the signer by position ("E-mail of signer 1"), the legend adds the
 * role; each field shows the API's detail for `/body/recipients/<index>/<field>`.
 */
export function RecipientFieldset({ index, recipient, onChange, error }: { index: number; recipient: RecipientDraft; onChange: (next: RecipientDraft) => void; error: unknown }) {
  const n = index + 1;
  const pointer = (field: string) => `/body/recipients/${index}/${field}`;
  const set = <K extends keyof RecipientDraft>(key: K) => (value: RecipientDraft[K]) => onChange({ ...recipient, [key]: value });
  return (
    <fieldset>
      <legend>
        Signer {n}: {recipient.role}
      </legend>
      <div className="env-row">
        <Field label={`Name of signer ${n}`} value={recipient.name} onChange={set('name')} isRequired autoComplete="off" error={error} pointer={pointer('name')} />
        <Field label={`E-mail of signer ${n}`} type="email" value={recipient.email} onChange={set('email')} isRequired autoComplete="off" error={error} pointer={pointer('email')} />
      </div>
      <div className="env-row">
        <SelectField label={`Delivery of signer ${n}`} options={DELIVERY_OPTIONS} value={recipient.delivery} onChange={(id) => set('delivery')(id as Delivery)} error={error} pointer={pointer('delivery')} />
        <SelectField label={`Verification of signer ${n}`} options={VERIFICATION_OPTIONS} value={recipient.verification} onChange={(id) => set('verification')(id as Verification)} error={error} pointer={pointer('verification')} />
        <NumberInput label={`Signing order of signer ${n}`} value={recipient.order} onChange={set('order')} minValue={1} maxValue={100} description="Lower signs first; equal orders sign at the same time." error={error} pointer={pointer('order')} />
      </div>
      {recipient.verification === 'sms' && (
        <Field label={`Phone of signer ${n}`} type="tel" value={recipient.phone} onChange={set('phone')} isRequired description="In international form, e.g. +14155550100." error={error} pointer={pointer('phone')} />
      )}
    </fieldset>
  );
}

/** People who receive the completed document without signing. */
export function CcFields({ cc, onChange, error }: { cc: readonly CcDraft[]; onChange: (next: CcDraft[]) => void; error: unknown }) {
  const update = (i: number, next: CcDraft) => onChange(cc.map((c, j) => (j === i ? next : c)));
  return (
    <fieldset>
      <legend>Copies (CC)</legend>
      <p className="muted small">They receive the completed, sealed document; they do not sign.</p>
      {cc.map((c, i) => (
        <div className="env-row" key={i}>
          <Field label={`Name of CC ${i + 1}`} value={c.name} onChange={(name) => update(i, { ...c, name })} autoComplete="off" error={error} pointer={`/body/cc/${i}/name`} />
          <Field label={`E-mail of CC ${i + 1}`} type="email" value={c.email} onChange={(email) => update(i, { ...c, email })} isRequired autoComplete="off" error={error} pointer={`/body/cc/${i}/email`} />
          <Button className="button button-quiet" onPress={() => onChange(cc.filter((_, j) => j !== i))}>
            Remove CC {i + 1}
          </Button>
        </div>
      ))}
      <div>
        <Button className="button" onPress={() => onChange([...cc, { name: '', email: '' }])} isDisabled={cc.length >= 50}>
          Add a CC
        </Button>
      </div>
    </fieldset>
  );
}
