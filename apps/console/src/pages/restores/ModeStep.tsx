import { Label, Radio, RadioGroup, Text } from 'react-aria-components';
import { useSession } from '../../app/session.tsx';
import { ModeOptions } from './ModeOptions.tsx';
import type { DestinationChoice, RestoreMode } from './request.ts';

/** Each mode in words: what it does to what. */
const MODES: Array<{ mode: RestoreMode; name: string; detail: string; adminOnly?: boolean }> = [
  { mode: 'sandbox', name: 'Sandbox', detail: 'A private copy on its own server for a limited time, to look at or query. Nothing else changes.' },
  { mode: 'new', name: 'New database', detail: 'Into a new database on a server you name, as its admin. The target is not touched.' },
  { mode: 'in-place', name: 'In place', detail: 'Replaces the target’s own databases with their state at the moment. Everything written since is gone.', adminOnly: true },
  { mode: 'download', name: 'Download', detail: 'A link to the encrypted backup (or a recovery bundle) to restore by hand.' },
];

/**
 * Step 3, where to: the mode (in place only for restorer-admin) and, under it, only the chosen mode's options.
 * `databases`: the base backup's, for the download's choice.
 */
export function ModeStep({ targetName, choice, onChange, error, databases }: { targetName: string; choice: DestinationChoice; onChange(choice: DestinationChoice): void; error: unknown; databases: readonly string[] }) {
  const { can } = useSession();
  const modes = MODES.filter((m) => !m.adminOnly || can('restorer-admin'));
  return (
    <>
      <RadioGroup className="rst-choice" value={choice.mode} onChange={(mode) => onChange({ ...choice, mode: mode as RestoreMode })}>
        <Label>Restore into</Label>
        <div className="rst-modes">
          {modes.map((m) => (
            <Radio key={m.mode} value={m.mode} className={m.mode === 'in-place' ? 'radio rst-mode rst-mode-danger' : 'radio rst-mode'}>
              <span className="rst-dot" aria-hidden="true" />
              <span>
                <span className="rst-mode-name">{m.name}</span>
                <span className="rst-mode-detail">{m.detail}</span>
              </span>
            </Radio>
          ))}
        </div>
        {!can('restorer-admin') && <Text slot="description">Restoring in place needs the role restorer-admin.</Text>}
      </RadioGroup>
      <ModeOptions targetName={targetName} choice={choice} onChange={onChange} error={error} databases={databases} />
    </>
  );
}
