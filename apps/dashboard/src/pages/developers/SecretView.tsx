import { Input, Label, TextField } from 'react-aria-components';
import { CopyButton } from '@sigil/web-ui';

/** A secret in a read-only field named `label` (selectable, announced) with a copy button beside it. */
export function SecretView({ label, secret, copyLabel = 'Copy secret' }: { label: string; secret: string; copyLabel?: string }) {
  return (
    <div className="stack">
      <TextField className="field" value={secret} isReadOnly>
        <Label>{label}</Label>
        <Input className="secret-input" onFocus={(e) => e.currentTarget.select()} />
      </TextField>
      <div className="row">
        <CopyButton text={secret} label={copyLabel} />
      </div>
    </div>
  );
}
