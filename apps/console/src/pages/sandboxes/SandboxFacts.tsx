import type { ReactNode } from 'react';
import { Link } from 'react-aria-components';
import { StatusBadge } from '@sigil/web-ui';
import { formatMoment } from '../../format.ts';
import type { Sandbox } from './detail-query.ts';
import { sizeUsed } from './size.ts';
import { TimeLeft } from './time-left.tsx';

const moment = (at: string | null | undefined) => (at ? formatMoment(Date.parse(at)) : undefined);

/** What the sandbox holds and how it is doing: phase, source, the moment its data show, expiry, size. */
export function SandboxFacts({ sandbox: s }: { sandbox: Sandbox }) {
  const resetting = s.observedResetGeneration < s.resetGeneration;
  return (
    <section aria-labelledby="sbx-facts" className="sbx-panel">
      <h2 id="sbx-facts" className="visually-hidden">
        Overview
      </h2>
      <dl className="sbx-facts">
        <Fact term="Phase">
          <StatusBadge status={s.phase} /> {resetting && <span className="small">a reset is under way</span>}
          {s.message && <div className="small">{s.message}</div>}
        </Fact>
        <Fact term="Target">
          {s.target ? <Link href={`/targets/${s.target.namespace}/${s.target.name}`}>{`${s.target.namespace}/${s.target.name}`}</Link> : <span className="muted">not visible to you</span>}
        </Fact>
        <Fact term="Backup">
          {s.backup ? (
            <>
              <code>{s.backup.id}</code> <span className="muted small">({s.backup.mode})</span>
            </>
          ) : (
            <span className="muted">not visible to you</span>
          )}
        </Fact>
        <Fact term="Data as of">{moment(s.time) ?? <span className="muted">known once the restore has run</span>}</Fact>
        <Fact term="Expires">
          <TimeLeft expires={s.expires} phase={s.phase} />
          <div className="small muted">{moment(s.expires)}</div>
        </Fact>
        <Fact term="Owner">{s.owner}</Fact>
        <Fact term="Engine and databases">
          {s.engine} · {s.databases.length ? s.databases.join(', ') : s.database}
        </Fact>
        <Fact term="Size used">{sizeUsed(s.usedBytes, s.sizeLimit)}</Fact>
        <Fact term="Created">{moment(s.created)}</Fact>
        {s.resetGeneration > 0 && <Fact term="Resets">{s.resetGeneration}</Fact>}
      </dl>
      {s.extensions.length > 0 && <Extensions extensions={s.extensions} />}
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

/** Every extension: asked, granted (less when capped by the policy's longest lifetime), by whom, why. */
function Extensions({ extensions }: { extensions: Sandbox['extensions'] }) {
  return (
    <>
      <h3>Extensions</h3>
      <ul className="sbx-extensions">
        {extensions.map((e, index) => (
          <li key={index}>
            {moment(e.at)}: {e.user} asked for {e.by}
            {e.granted && e.granted !== e.by ? `, granted ${e.granted}` : ''}
            {e.reason && <span className="muted"> — {e.reason}</span>}
          </li>
        ))}
      </ul>
    </>
  );
}
