import type { ReactNode } from 'react';
import { Link } from 'react-aria-components';
import { bytes, count, duration, formatMoment } from '../../format.ts';
import { momentsOf } from './restore-moments.ts';
import type { RestoreView } from './restore-queries.ts';

/** Where a restore came from, where it went, its plan and its checks. */
export function RestoreFacts({ restore, sandboxGone }: { restore: RestoreView; sandboxGone: boolean }) {
  const { source, plan } = restore;
  const { asked, effective } = momentsOf(plan, restore.backup?.time);
  return (
    <div className="rst-detail-grid">
      <Facts title="Source">
        <Fact term="Target">{`${restore.target.namespace}/${restore.target.name}`} <span className="muted small">({restore.target.engine})</span></Fact>
        <Fact term="Backup">
          <code>{source.backupID || '—'}</code>
          {restore.backup?.time && <div className="muted small">consistent at {formatMoment(Date.parse(restore.backup.time))}{restore.backup.mode ? `, ${restore.backup.mode}` : ''}</div>}
        </Fact>
        <Fact term="Moment asked">{asked !== undefined ? formatMoment(asked) : source.latest ? 'latest' : 'the backup itself (chosen by id)'}</Fact>
        <Fact term="Data as of">
          {effective !== undefined ? <strong className={asked !== undefined && effective !== asked ? 'rst-differs' : undefined}>{formatMoment(effective)}</strong> : '—'}
          {asked !== undefined && effective !== undefined && effective !== asked && <div className="small">{duration((asked - effective) / 1000)} before the moment asked: the newest full backup at or before it.</div>}
        </Fact>
      </Facts>
      <Facts title="Destination">
        <Destination restore={restore} sandboxGone={sandboxGone} />
      </Facts>
      <Facts title="Plan">
        {plan ? (
          <>
            <Fact term="Base backup"><code>{plan.baseBackupID}</code></Fact>
            <Fact term="Change log replayed">{plan.segments > 0 ? count(plan.segments, 'segment') : 'none'}</Fact>
            <Fact term="Read from the store">{bytes(plan.bytes)}</Fact>
            {plan.message && <Fact term="In words">{plan.message}</Fact>}
          </>
        ) : (
          <Fact term="Plan">{restore.phase === 'Pending' ? 'not made yet' : 'the backup as it is, nothing replayed'}</Fact>
        )}
        {restore.durationSeconds > 0 && <Fact term="Took">{duration(restore.durationSeconds)}</Fact>}
      </Facts>
      <Checks checks={restore.checks} phase={restore.phase} />
    </div>
  );
}

function Destination({ restore, sandboxGone }: { restore: RestoreView; sandboxGone: boolean }) {
  const d = restore.destination;
  return (
    <>
      <Fact term="Mode">{restore.mode}</Fact>
      {restore.mode === 'sandbox' && restore.sandbox && (
        <Fact term="Sandbox">
          {sandboxGone ? <span>{restore.sandbox} <span className="muted small">(deleted or expired)</span></span> : <Link href={`/sandboxes/${restore.sandbox}`}>{restore.sandbox}</Link>}
          {d.sandboxTTL && <div className="muted small">lifetime asked: {d.sandboxTTL}</div>}
          {d.expose && <div className="muted small">reachable through the tunnel</div>}
        </Fact>
      )}
      {d.host && <Fact term="Server">{d.host}</Fact>}
      {d.database && <Fact term="Database">{d.database}</Fact>}
      {restore.mode === 'in-place' && (
        <Fact term="Safety backup">{restore.safetyBackup ? <code>{restore.safetyBackup}</code> : <span className="rst-differs">none (skipped)</span>}</Fact>
      )}
      <Fact term="Tables">{d.tables?.length ? d.tables.join(', ') : 'all'}</Fact>
      {restore.phase !== 'Failed' && restore.message && <Fact term="Message">{restore.message}</Fact>}
    </>
  );
}

function Checks({ checks, phase }: { checks: RestoreView['checks']; phase: string }) {
  return (
    <section className="rst-facts-box" aria-labelledby="rst-checks">
      <h2 id="rst-checks">Checks</h2>
      {checks.length === 0 ? (
        <p className="muted">{phase === 'Succeeded' || phase === 'Failed' ? 'No checks ran for this restore.' : 'Checks, when asked for, run once the data are restored.'}</p>
      ) : (
        <ul className="rst-checks">
          {checks.map((c) => (
            <li key={c.name}>
              <span className={c.passed ? 'badge badge-ok' : 'badge badge-failed'}>{c.passed ? 'passed' : 'failed'}</span> <strong>{c.name}</strong>
              {c.message && <div className="small">{c.message}</div>}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function Facts({ title, children }: { title: string; children: ReactNode }) {
  const id = `rst-facts-${title.toLowerCase()}`;
  return (
    <section className="rst-facts-box" aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      <dl className="rst-facts">{children}</dl>
    </section>
  );
}

function Fact({ term, children }: { term: string; children: ReactNode }) {
  return (
    <div>
      <dt>{term}</dt>
      <dd>{children}</dd>
    </div>
  );
}
