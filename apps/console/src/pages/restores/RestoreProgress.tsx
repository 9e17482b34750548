import { Label, Link, ProgressBar } from 'react-aria-components';
import { StatusBadge } from '@sigil/web-ui';
import { bytes, formatMoment } from '../../format.ts';
import type { RestoreView } from './restore-queries.ts';

/** The sandbox a restore fills: Ready only once its post-restore SQL ran, after the restore succeeded. */
export interface FilledSandbox {
  name: string;
  phase: string;
  message: string;
}

/**
 * How far a restore is: its phase and stage, the bytes as a progress bar, and how it ended: the sandbox to open, the
 * download link, the new database; or, failed, the mover's message, prominently.
 */
export function RestoreProgress({ restore, sandbox }: { restore: RestoreView; sandbox?: FilledSandbox }) {
  const ended = restore.phase === 'Succeeded' || restore.phase === 'Failed';
  return (
    <div className="rst-progress">
      <p className="rst-phase">
        <StatusBadge status={restore.phase} /> {restore.progress?.stage && !ended ? <span>{restore.progress.stage}</span> : null}
        {sandbox && <span className="muted"> · sandbox {sandbox.name}: {sandbox.phase}</span>}
      </p>
      <BytesBar restore={restore} />
      <Outcome restore={restore} sandbox={sandbox} />
    </div>
  );
}

function BytesBar({ restore }: { restore: RestoreView }) {
  const done = restore.phase === 'Succeeded';
  const total = restore.progress?.totalBytes ?? 0;
  const read = done ? Math.max(total, restore.progress?.bytes ?? 0) : (restore.progress?.bytes ?? 0);
  if (restore.phase === 'Failed' || (done && total === 0)) return null;
  const known = total > 0;
  return (
    <ProgressBar
      className="rst-bar"
      value={known ? Math.min(read, total) : undefined}
      minValue={0}
      maxValue={known ? total : 100}
      isIndeterminate={!known}
      valueLabel={known ? `${bytes(read)} of ${bytes(total)}` : read > 0 ? `${bytes(read)} so far` : 'starting'}
    >
      {({ percentage, valueText }) => (
        <>
          <div className="rst-bar-label">
            <Label>Restored</Label>
            <span>{valueText}</span>
          </div>
          <div className="rst-bar-track">
            <div className={known ? 'rst-bar-fill' : 'rst-bar-fill rst-bar-moving'} style={known ? { width: `${percentage}%` } : undefined} />
          </div>
        </>
      )}
    </ProgressBar>
  );
}

function Outcome({ restore, sandbox }: { restore: RestoreView; sandbox?: FilledSandbox }) {
  if (restore.phase === 'Failed') {
    return (
      <div role="alert" className="alert alert-error rst-failed">
        <strong>The restore failed.</strong>
        <p className="rst-message">{restore.message || 'The mover gave no message.'}</p>
      </div>
    );
  }
  if (sandbox && sandbox.phase === 'Failed') {
    return (
      <div role="alert" className="alert alert-error rst-failed">
        <strong>Sandbox {sandbox.name} failed.</strong>
        <p className="rst-message">{sandbox.message || restore.message}</p>
      </div>
    );
  }
  if (restore.phase !== 'Succeeded') return restore.message ? <p className="muted rst-message">{restore.message}</p> : null;
  if (restore.mode === 'sandbox') return <SandboxOutcome restore={restore} sandbox={sandbox} />;
  if (restore.mode === 'download') return <DownloadOutcome restore={restore} />;
  return (
    <div className="alert alert-success">
      <strong>{restore.mode === 'in-place' ? `Restored in place${restore.target ? ` into ${restore.target.namespace}/${restore.target.name}` : ''}.` : 'Restored into the new database.'}</strong>
      {restore.message && <p className="rst-message">{restore.message}</p>}
    </div>
  );
}

function SandboxOutcome({ restore, sandbox }: { restore: RestoreView; sandbox?: FilledSandbox }) {
  const name = sandbox?.name ?? restore.sandbox;
  const phase = sandbox?.phase ?? 'Ready';
  if (phase === 'Pending' || phase === 'Restoring') {
    return <p className="muted">Restored; sandbox {name} is getting ready ({phase}){sandbox?.message ? `: ${sandbox.message}` : ''}.</p>;
  }
  if (phase !== 'Ready') return <p>Restored into sandbox {name}, which is no longer there ({phase.toLowerCase()}): sandboxes expire, or are deleted.</p>;
  return (
    <div className="alert alert-success">
      <strong>Sandbox {name} is ready.</strong>{' '}
      <Link href={`/sandboxes/${name}`}>Open sandbox {name}</Link> to query it.
    </div>
  );
}

function DownloadOutcome({ restore }: { restore: RestoreView }) {
  const expires = restore.downloadExpires ? Date.parse(restore.downloadExpires) : undefined;
  if (!restore.downloadURL || (expires !== undefined && expires <= Date.now())) {
    return <p className="muted">The download link {expires !== undefined ? `expired at ${formatMoment(expires)}` : 'is gone'}: start the download again for a new one.</p>;
  }
  return (
    <div className="alert alert-success">
      <strong>The download is ready.</strong>{' '}
      <a href={restore.downloadURL} rel="noreferrer">
        Download (encrypted)
      </a>
      {expires !== undefined && <span>, valid until {formatMoment(expires)}</span>}
      {restore.message && <p className="rst-message">{restore.message}</p>}
    </div>
  );
}
