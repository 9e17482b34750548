import { Link } from 'react-aria-components';
import { StatusBadge } from '@sigil/web-ui';
import { bytes, duration, formatMoment } from '../../format.ts';
import { Empty, Scroller } from '../../components/Scroller.tsx';

export interface RunProgress {
  stage: string;
  bytes: number;
  totalBytes: number;
}

export interface BackupRunRow {
  namespace: string;
  name: string;
  /** The target's name, in the run's namespace. */
  target: string;
  phase: string;
  message: string;
  reason: string;
  created: string;
  bytes: number;
  durationSeconds: number;
  progress?: RunProgress | null;
}

export interface RestoreRow {
  namespace: string;
  name: string;
  target: { namespace: string; name: string };
  mode: string;
  phase: string;
  message: string;
  requestedBy: string;
  created: string;
  durationSeconds: number;
  progress?: RunProgress | null;
}

const RUNNING = new Set(['Pending', 'Queued', 'Running', 'Postponed', 'Restoring']);
const FAILED = new Set(['Failed', 'Error']);

/** Newest first by creation time (the API's order; kept when a live read merges). */
export function newestFirst<T extends { created: string }>(rows: readonly T[]): T[] {
  return [...rows].sort((a, b) => Date.parse(b.created) - Date.parse(a.created));
}

/** Backup runs, newest first: target, phase, why, when, how long, how much data read; progress while running, the message when failed. */
export function BackupRunsTable({ runs }: { runs: readonly BackupRunRow[] }) {
  return (
    <Scroller label="Backup runs">
      <thead>
        <tr>
          <th scope="col">Target</th>
          <th scope="col">Phase</th>
          <th scope="col">Reason</th>
          <th scope="col">Created</th>
          <th scope="col">Duration</th>
          {/* Raw bytes read from the database (so far, or all of them once it succeeded): not what the store keeps. */}
          <th scope="col">Data read</th>
        </tr>
      </thead>
      <tbody>
        {runs.length === 0 && <Empty columns={6}>No backup has run yet.</Empty>}
        {newestFirst(runs).map((run) => (
          <tr key={`${run.namespace}/${run.name}`}>
            <th scope="row">
              <Link href={`/targets/${run.namespace}/${run.target}`}>
                {run.namespace}/{run.target}
              </Link>
              <div className="muted small hist-run-name">{run.name}</div>
            </th>
            <td>
              <Phase phase={run.phase} message={run.message} progress={run.progress} what={`backup ${run.name}`} />
            </td>
            <td className="hist-nowrap">{run.reason || <span className="muted">scheduled</span>}</td>
            <td className="hist-time">
              <Moment at={run.created} />
            </td>
            <td className="hist-nowrap">{run.durationSeconds > 0 ? duration(run.durationSeconds) : <span className="muted">—</span>}</td>
            <td className="hist-nowrap">{run.bytes > 0 ? bytes(run.bytes) : <span className="muted">—</span>}</td>
          </tr>
        ))}
      </tbody>
    </Scroller>
  );
}

/** Restores, newest first: what into where, who asked, when; progress while running, the message when failed. */
export function RestoresTable({ restores }: { restores: readonly RestoreRow[] }) {
  return (
    <Scroller label="Restores">
      <thead>
        <tr>
          <th scope="col">Restore</th>
          <th scope="col">Mode</th>
          <th scope="col">Target</th>
          <th scope="col">Phase</th>
          <th scope="col">Requested by</th>
          <th scope="col">Created</th>
        </tr>
      </thead>
      <tbody>
        {restores.length === 0 && <Empty columns={6}>No restore yet.</Empty>}
        {newestFirst(restores).map((restore) => (
          <tr key={`${restore.namespace}/${restore.name}`}>
            <th scope="row">
              <Link href={`/restores/${restore.namespace}/${restore.name}`}>
                {restore.namespace}/{restore.name}
              </Link>
            </th>
            <td>{restore.mode}</td>
            <td>
              <Link href={`/targets/${restore.target.namespace}/${restore.target.name}`}>
                {restore.target.namespace}/{restore.target.name}
              </Link>
            </td>
            <td>
              <Phase phase={restore.phase} message={restore.message} progress={restore.progress} what={`restore ${restore.name}`} />
              {restore.durationSeconds > 0 && <div className="muted small">took {duration(restore.durationSeconds)}</div>}
            </td>
            <td>{restore.requestedBy || <span className="muted">—</span>}</td>
            <td className="hist-time">
              <Moment at={restore.created} />
            </td>
          </tr>
        ))}
      </tbody>
    </Scroller>
  );
}

/** The phase badge, then how far a running one is, what went wrong with a failed one, or why a postponed one waits. */
function Phase({ phase, message, progress, what }: { phase: string; message: string; progress?: RunProgress | null; what: string }) {
  return (
    <>
      <StatusBadge status={phase || 'unknown'} />
      {RUNNING.has(phase) && progress && <Progress progress={progress} what={what} />}
      {FAILED.has(phase) && message && <div className="small danger">{message}</div>}
      {phase === 'Postponed' && message && <div className="small">{message}</div>}
    </>
  );
}

function Progress({ progress, what }: { progress: RunProgress; what: string }) {
  const known = progress.totalBytes > 0;
  const share = known ? Math.min(100, Math.round((progress.bytes / progress.totalBytes) * 100)) : undefined;
  return (
    <div className="hist-progress small">
      {known && <progress max={progress.totalBytes} value={Math.min(progress.bytes, progress.totalBytes)} aria-label={`Progress of ${what}`} />}
      <span>
        {progress.stage && `${progress.stage}: `}
        {bytes(progress.bytes)}
        {known && ` of ${bytes(progress.totalBytes)} (${share}%)`}
      </span>
    </div>
  );
}

function Moment({ at }: { at: string }) {
  return <time dateTime={at}>{formatMoment(Date.parse(at))}</time>;
}
