import type { ReactNode } from 'react';
import { Checkbox, FieldError, Group, Input, Label, NumberField, Text } from 'react-aria-components';
import { ApiError, Field, SelectField } from '@sigil/web-ui';
import { pointerOf } from './refusal.ts';
import type { DestinationChoice } from './request.ts';

interface OptionsProps {
  targetName: string;
  choice: DestinationChoice;
  onChange(choice: DestinationChoice): void;
  /** The API's refusal, placed beside its field (refusal.ts). */
  error: unknown;
  databases: readonly string[];
}

/** The chosen mode's own options, and nothing of the others. */
export function ModeOptions(props: OptionsProps) {
  const { choice } = props;
  const Options = { sandbox: SandboxOptions, new: NewDatabaseOptions, 'in-place': InPlaceOptions, download: DownloadOptions }[choice.mode];
  return (
    <div className="rst-options">
      <Options {...props} />
    </div>
  );
}

function SandboxOptions({ choice, onChange, error }: OptionsProps) {
  return (
    <>
      <Slot field="ttl">
        <Field label="Lifetime" value={choice.ttl} onChange={(ttl) => onChange({ ...choice, ttl })} error={error} pointer={pointerOf('ttl')} placeholder="4h" description="How long the sandbox lives, such as 4h, 90m or 2d. Blank: the policy’s default (4 hours unless it says otherwise). Never longer than the policy’s maximum; it can be extended later." />
      </Slot>
      <Tick field="expose" checked={choice.expose} onChange={(expose) => onChange({ ...choice, expose })} error={error} label="Reachable from your machine" detail="Through the tunnel (strata connect), as well as from the console’s query editor." />
    </>
  );
}

function NewDatabaseOptions({ choice, onChange, error }: OptionsProps) {
  return (
    <>
      <Slot field="host">
        <Field label="Server host" value={choice.host} onChange={(host) => onChange({ ...choice, host })} isRequired error={error} pointer={pointerOf('host')} description="The database server to create the database on." />
      </Slot>
      <Slot field="port">
        <PortField value={choice.port} onChange={(port) => onChange({ ...choice, port })} error={error} />
      </Slot>
      <Slot field="database">
        <Field label="New database name" value={choice.database} onChange={(database) => onChange({ ...choice, database })} isRequired error={error} pointer={pointerOf('database')} description="Must not exist yet. With several databases in the backup, each becomes name_source." />
      </Slot>
      <Slot field="credentialsSecret">
        <Field label="Admin credentials secret" value={choice.credentialsSecret} onChange={(credentialsSecret) => onChange({ ...choice, credentialsSecret })} isRequired error={error} pointer={pointerOf('credentialsSecret')} placeholder="default/restore-admin" description="A secret (namespace/name, keys username and password) of a user who may create databases on that server." />
      </Slot>
    </>
  );
}

function InPlaceOptions({ targetName, choice, onChange, error }: OptionsProps) {
  return (
    <>
      <p className="alert alert-error rst-inplace-warning">
        <strong>This replaces {targetName}’s databases.</strong> Their sessions are ended, and everything written after the moment is gone from them.
      </p>
      <Slot field="confirm">
        <Field label={`Type ${targetName} to confirm`} value={choice.confirm} onChange={(confirm) => onChange({ ...choice, confirm })} isRequired error={error} pointer={pointerOf('confirm')} description="The target’s name, as a check that this is the database you mean." />
      </Slot>
      <Slot field="credentialsSecret">
        <Field label="Admin credentials secret" value={choice.credentialsSecret} onChange={(credentialsSecret) => onChange({ ...choice, credentialsSecret })} error={error} pointer={pointerOf('credentialsSecret')} description="Optional: a secret (namespace/name) of a user who may drop and create its databases. Blank: the target’s own credentials." />
      </Slot>
      <Tick
        field="skipSafetyBackup"
        checked={choice.skipSafetyBackup}
        onChange={(skipSafetyBackup) => onChange({ ...choice, skipSafetyBackup })}
        error={error}
        label="Skip the safety backup (not recommended)"
        detail="Unless skipped, a full backup of the target as it is now is taken first, and the restore waits for it: if the result is not what you wanted, that backup puts it back. Skipping starts at once and leaves no way back."
      />
    </>
  );
}

function DownloadOptions({ choice, onChange, error, databases }: OptionsProps) {
  return (
    <>
      <p className="muted">The link is to the backup as stored, encrypted: only a holder of the store’s age identity can read it. It stays valid for a limited time (an hour unless configured otherwise). With change capture, a point-in-time download is a bundle with the change log and the commands to replay it.</p>
      {databases.length > 1 && (
        <Slot field="database">
          <SelectField
            label="Database to download"
            options={databases.map((d) => ({ id: d, name: d }))}
            value={choice.downloadDatabase || (databases[0] as string)}
            onChange={(downloadDatabase) => onChange({ ...choice, downloadDatabase })}
            error={error}
            pointer={pointerOf('database')}
            description="A logical backup holds one file per database; a physical one is a single bundle (then this is ignored)."
          />
        </Slot>
      )}
    </>
  );
}

/** Wraps a field so a refusal can bring the keyboard focus to it (RestoreWizard's focusField). */
function Slot({ field, children }: { field: string; children: ReactNode }) {
  return <div data-rst-field={field}>{children}</div>;
}

function PortField({ value, onChange, error }: { value: number; onChange(port: number): void; error: unknown }) {
  const detail = error instanceof ApiError ? error.fieldError(pointerOf('port')) : undefined;
  return (
    <NumberField className="field" value={value} onChange={onChange} minValue={1} maxValue={65535} formatOptions={{ useGrouping: false }} isInvalid={detail !== undefined} validationBehavior="aria">
      <Label>Server port</Label>
      <Group>
        <Input />
      </Group>
      <Text slot="description">Blank: the engine’s usual port (5432 Postgres, 3306 MariaDB/MySQL).</Text>
      <FieldError>{detail}</FieldError>
    </NumberField>
  );
}

function Tick({ field, checked, onChange, label, detail, error }: { field: 'expose' | 'skipSafetyBackup'; checked: boolean; onChange(value: boolean): void; label: string; detail: string; error: unknown }) {
  const problem = error instanceof ApiError ? error.fieldError(pointerOf(field)) : undefined;
  return (
    <div className="rst-tick" data-rst-field={field}>
      <Checkbox className="checkbox rst-checkbox" isSelected={checked} onChange={onChange} aria-describedby={`rst-${field}-detail`} isInvalid={problem !== undefined}>
        <span className="rst-box" aria-hidden="true" />
        {label}
      </Checkbox>
      <p className="muted small" id={`rst-${field}-detail`}>
        {detail}
      </p>
      {problem && <p className="rst-field-error">{problem}</p>}
    </div>
  );
}
