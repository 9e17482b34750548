import { Button } from 'react-aria-components';
import { duration, formatMoment } from '../../format.ts';
import { formatMomentInput, formatTimeOfDay, type Moment } from './moment.ts';
import type { Verdict } from './restorable.ts';

/**
 * Whether the moment can be restored, said at once from the target's windows and backups (the plan below is the
 * server's word): exactly, as the newest full backup before it, or not at all, with the nearest moments that can be
 * as buttons. A polite live region: a person moving the timeline's marker hears it when it settles.
 */
export function MomentVerdict({ moment, verdict, latestAt, onUse }: { moment: Moment; verdict: Verdict | undefined; latestAt: number | undefined; onUse(at: number): void }) {
  return (
    <div className="rst-verdict" role="status">
      {moment.kind === 'latest' ? <LatestWords latestAt={latestAt} /> : moment.kind === 'at' && verdict ? <VerdictWords at={moment.at} verdict={verdict} onUse={onUse} /> : null}
    </div>
  );
}

function LatestWords({ latestAt }: { latestAt: number | undefined }) {
  if (latestAt === undefined) return <p className="rst-no">Nothing of this target can be restored yet: it has no completed backup.</p>;
  return (
    <p className="rst-yes">
      <strong>Restorable.</strong> Latest is {formatMoment(latestAt)} now; the restore takes whatever is newest when it starts (a sandbox: when its server is up).
    </p>
  );
}

function VerdictWords({ at, verdict, onUse }: { at: number; verdict: Verdict; onUse(at: number): void }) {
  switch (verdict.kind) {
    case 'exact':
      return (
        <p className="rst-yes">
          <strong>Restorable to the second.</strong> The change log covers {formatMoment(at)}: the data will be exactly as committed by then.
        </p>
      );
    case 'full':
      return (
        <p className="rst-warn">
          <strong>Restorable as the newest full backup before it.</strong> No change-capture window covers this moment, so the data will be as of{' '}
          {formatMoment(verdict.backupAt)}
          {verdict.backupAt < at ? `, ${duration((at - verdict.backupAt) / 1000)} before the moment asked` : ''}.
        </p>
      );
    case 'nothing':
      return <p className="rst-no">Nothing of this target can be restored yet: it has no completed backup.</p>;
    case 'outside':
      return <OutsideWords at={at} before={verdict.before} after={verdict.after} onUse={onUse} />;
  }
}

function OutsideWords({ at, before, after, onUse }: { at: number; before?: number; after?: number; onUse(at: number): void }) {
  return (
    <div className="rst-no">
      <p>
        <strong>Not restorable.</strong> No change-capture window covers {formatMoment(at)}: a restore to it would be refused, never quietly given an earlier state.
        {before === undefined && after === undefined ? ' This target has no window yet.' : ' The nearest moments that can be restored:'}
      </p>
      {(before !== undefined || after !== undefined) && (
        <ul className="rst-suggestions">
          {before !== undefined && (
            <li>
              <Button className="button button-small" onPress={() => onUse(before)}>{`Use ${sameDay(before, at) ? formatTimeOfDay(before) : formatMomentInput(before)} instead`}</Button>{' '}
              <span className="muted small">the end of the window before ({duration((at - before) / 1000)} earlier)</span>
            </li>
          )}
          {after !== undefined && (
            <li>
              <Button className="button button-small" onPress={() => onUse(after)}>{`Use ${sameDay(after, at) ? formatTimeOfDay(after) : formatMomentInput(after)} instead`}</Button>{' '}
              <span className="muted small">the start of the window after ({duration((after - at) / 1000)} later)</span>
            </li>
          )}
        </ul>
      )}
    </div>
  );
}

const sameDay = (a: number, b: number) => new Date(a).toDateString() === new Date(b).toDateString();
