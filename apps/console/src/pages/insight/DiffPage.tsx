import { Link } from 'react-aria-components';
import { useParams } from 'react-router';
import { FormError, Loading, Page } from '@sigil/web-ui';
import { unwrap } from '../../api/rest.ts';
import { useRead } from '../../api/useRead.ts';
import { useSession } from '../../app/session.tsx';
import { count, formatMoment } from '../../format.ts';
import { ColumnChanges, RowChanges, SchemaLines, sizeChange, StructureChanges } from './DiffParts.tsx';
import { changesPath, type DiffResult } from './insight-model.ts';
import { SegmentsTable } from './SegmentsTable.tsx';
import './insight.css';

type Backup = NonNullable<DiffResult['from']>;

const momentOf = (backup: Backup | undefined) => {
  const at = backup?.time ?? backup?.completed;
  return at ? formatMoment(Date.parse(at)) : 'unknown time';
};

/**
 * What changed between two backups of a target (/targets/:ns/:name/diff/:a/:b, either order): the schema, the
 * migrations, the rows and sizes per table, and the change-log segments between them. Read from the two backups'
 * inventories by the catalog: nothing is restored.
 */
export default function DiffPage() {
  const { ns = '', name = '', a = '', b = '' } = useParams();
  const { rest } = useSession();
  const read = useRead(() => unwrap(rest.GET('/backups/{id}/diff/{other}', { params: { path: { id: a, other: b } } })), [a, b]);
  const target = `/targets/${encodeURIComponent(ns)}/${encodeURIComponent(name)}`;
  return (
    <Page title="Compare backups" description={`${ns}/${name}`}>
      <p>
        <Link href={target}>Back to {ns}/{name}</Link>
      </p>
      <FormError error={read.error} />
      {read.loading && !read.data && <Loading what="the differences between the two backups" />}
      {read.data && <DiffView result={read.data} namespace={ns} name={name} />}
    </Page>
  );
}

function BackupFact({ label, backup }: { label: string; backup: Backup | undefined }) {
  return (
    <div>
      <dt>{label}</dt>
      <dd>
        {momentOf(backup)}
        <div className="muted small">
          <code>{backup?.id}</code>
        </div>
      </dd>
    </div>
  );
}

function DiffView({ result, namespace, name }: { result: DiffResult; namespace: string; name: string }) {
  const { can } = useSession();
  const diff = result.diff ?? {};
  const { from, to } = result;
  const segments = result.segments ?? [];
  const applied = diff.migrationsApplied ?? [];
  const between = from?.time && to?.time ? changesPath(namespace, name, from.time, to.time) : undefined;
  return (
    <>
      <dl className="facts">
        <BackupFact label="From (older)" backup={from} />
        <BackupFact label="To (newer)" backup={to} />
        <div>
          <dt>Schema</dt>
          <dd>{diff.schemaChanged ? <strong>changed</strong> : 'unchanged'}</dd>
        </div>
        <div>
          <dt>Migration</dt>
          <dd>{diff.migrationBefore || diff.migrationAfter ? `${diff.migrationBefore || 'none'} → ${diff.migrationAfter || 'none'}` : <span className="muted">no migration table</span>}</dd>
        </div>
        <div>
          <dt>Size</dt>
          <dd>{sizeChange(diff)}</dd>
        </div>
        <div>
          <dt>Change log between them</dt>
          <dd>{count(segments.length, 'segment')}</dd>
        </div>
      </dl>
      <section aria-labelledby="diff-migrations" className="target-section">
        <h2 id="diff-migrations">Migrations applied</h2>
        {applied.length === 0 ? (
          <p>No migration was recorded between these backups.</p>
        ) : (
          <ol className="insight-list">
            {applied.map((m) => (
              <li key={m}>
                <code>{m}</code>
              </li>
            ))}
          </ol>
        )}
      </section>
      <StructureChanges diff={diff} />
      <ColumnChanges diff={diff} />
      <RowChanges diff={diff} />
      <SchemaLines lines={diff.lines ?? []} />
      <section aria-labelledby="diff-segments" className="target-section">
        <h2 id="diff-segments">Change log between them</h2>
        <SegmentsTable segments={segments} label="Change-log segments between the two backups" links={{ namespace, name, since: from?.time, until: to?.time, mayReadRows: can('restorer') }} />
        {between && (
          <p>
            <Link href={between}>Changes between these two backups</Link>
          </p>
        )}
      </section>
    </>
  );
}
