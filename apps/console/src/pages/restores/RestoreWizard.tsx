import { useEffect, useRef, useState, type ReactNode } from 'react';
import { Link } from 'react-aria-components';
import { useSearchParams } from 'react-router';
import { useQuery } from 'urql';
import { ApiError, FormError, Loading, Page, SelectField } from '@sigil/web-ui';
import { useSession } from '../../app/session.tsx';
import { refusalOf } from '../../api/graphql-refusal.ts';
import { FollowRestore, FollowSandbox } from './Follow.tsx';
import { ModeStep } from './ModeStep.tsx';
import { MomentStep } from './MomentStep.tsx';
import { parseMoment, type Moment } from './moment.ts';
import { PlanStep } from './PlanStep.tsx';
import { pointerOf } from './refusal.ts';
import { EMPTY_DESTINATION, shownFieldsOf, type DestinationChoice, type RestoreMode } from './request.ts';
import { StartStep, type Started } from './StartStep.tsx';
import { TablesStep } from './TablesStep.tsx';
import { useWizardReads } from './use-wizard-reads.ts';
import { TargetsQuery } from './wizard-queries.ts';
import './restores.css';

const MODES: readonly RestoreMode[] = ['sandbox', 'new', 'in-place', 'download'];

/**
 * `/restore?target=ns/name&at=<RFC 3339>&mode=sandbox`: the restore wizard, one page of steps in order (target,
 * moment, destination, tables, plan, start), then the progress. Only restorers see it; anyone else reads why not.
 */
export default function RestoreWizardPage() {
  const { can, principal } = useSession();
  if (!can('restorer')) {
    return (
      <Page title="Restore" description="Restore a target to a moment: into a sandbox, a new database, in place, or as a download.">
        <p className="alert alert-info">
          Your role ({principal?.role ?? 'unknown'}) cannot restore: restoring needs the role restorer (in place: restorer-admin). You can follow every restore under{' '}
          <Link href="/restores">Restores</Link>, and see what each target can be restored to on its page.
        </p>
      </Page>
    );
  }
  return <RestoreWizard />;
}

function RestoreWizard() {
  const [params] = useSearchParams();
  const { can } = useSession();
  const [targetRef, setTargetRef] = useState(params.get('target') ?? '');
  const [moment, setMoment] = useState<Moment>(() => momentFromLink(params.get('at')));
  const [showMomentProblem, setShowMomentProblem] = useState(false);
  const [destination, setDestination] = useState<DestinationChoice>(() => ({ ...EMPTY_DESTINATION, mode: modeFromLink(params.get('mode'), can('restorer-admin')) }));
  const [tables, setTables] = useState<readonly string[] | 'all'>('all');
  const [refusal, setRefusal] = useState<unknown>();
  const [started, setStarted] = useState<Started>();
  const reads = useWizardReads(targetRef, moment, moment.kind === 'at' ? moment.at : undefined);
  const databases = reads.baseBackup?.inventory?.databases.map((d) => d.name) ?? reads.baseBackup?.databases ?? [];

  // A refusal is about what was sent: once any of it changes, it no longer stands.
  useEffect(() => setRefusal(undefined), [targetRef, moment, destination, tables]);
  // Another target has other tables.
  useEffect(() => setTables('all'), [targetRef]);

  const targetName = targetRef.split('/')[1] ?? '';
  const destinationSent = { ...destination, downloadDatabase: destination.downloadDatabase || (databases.length > 1 ? (databases[0] ?? '') : '') };
  return (
    <Page title="Restore" description="Pick a target and a moment, say where to restore it, check the plan, then start. Nothing happens before the last step.">
      <Step number={1} title="Target">
        <TargetPicker value={targetRef} onChange={setTargetRef} refusal={refusal} />
      </Step>
      {targetRef && reads.targetMissing && <p className="alert alert-error">There is no target {targetRef}, or your scope does not include it.</p>}
      <FormError error={reads.targetError} />
      {reads.target && (
        <>
          <Step number={2} title="Moment">
            <MomentStep
              target={reads.target}
              timeline={reads.timeline}
              moment={moment}
              onMoment={setMoment}
              apiProblem={refusalField(refusal, 'at')}
              showProblem={showMomentProblem}
              onShowProblem={() => setShowMomentProblem(true)}
            />
          </Step>
          <Step number={3} title="Where to restore">
            <ModeStep targetName={targetName} choice={destinationSent} onChange={setDestination} error={refusal} databases={databases} />
          </Step>
          {destination.mode !== 'download' && (
            <Step number={4} title="Tables">
              <TablesStep backup={reads.baseBackup} loading={reads.inventoryLoading} readError={reads.inventoryError} value={tables} onChange={setTables} error={refusal} />
            </Step>
          )}
          <Step number={destination.mode === 'download' ? 4 : 5} title="Plan">
            <PlanStep plan={reads.plan} loading={reads.planLoading} problem={reads.planProblem} moment={moment} />
          </Step>
          <Step number={destination.mode === 'download' ? 5 : 6} title={destination.mode === 'sandbox' ? 'Open the sandbox' : 'Start'}>
            <StartStep
              targetRef={targetRef}
              moment={moment}
              destination={destinationSent}
              tables={tables}
              shownFields={shownFieldsOf(destination.mode, databases.length > 1)}
              refusal={refusal}
              onRefusal={setRefusal}
              onShowMomentProblem={() => setShowMomentProblem(true)}
              onStarted={setStarted}
            />
          </Step>
          {started && <Progress started={started} />}
        </>
      )}
    </Page>
  );
}

function Step({ number, title, children }: { number: number; title: string; children: ReactNode }) {
  const id = `rst-step-${number}`;
  return (
    <section className="rst-step" aria-labelledby={id}>
      <h2 id={id}>
        <span className="rst-step-number">{number}.</span> {title}
      </h2>
      {children}
    </section>
  );
}

function TargetPicker({ value, onChange, refusal }: { value: string; onChange(value: string): void; refusal: unknown }) {
  const [{ data, error, fetching }] = useQuery({ query: TargetsQuery });
  const targets = data?.strataTargets;
  if (!targets) return fetching ? <Loading what="the targets" /> : <FormError error={refusalOf(error)} />;
  if (targets.length === 0) return <p>No target to restore: none is applied, or none is in your scope.</p>;
  const options = targets.map((t) => ({ id: `${t.namespace}/${t.name}`, name: `${t.namespace}/${t.name}`, detail: `${t.engine}${t.pitr ? ', change capture (any second of its windows)' : ', full backups only'}` }));
  const known = options.some((o) => o.id === value);
  return (
    <div data-rst-field="target">
      <SelectField
        label="Target"
        options={known ? options : [{ id: value, name: value ? `${value} (not found)` : 'Choose a target' }, ...options]}
        value={value}
        onChange={onChange}
        error={refusal}
        pointer={pointerOf('target')}
        description="The database to restore, among the targets you may see."
      />
    </div>
  );
}

/** The section that follows the restore once started: focused, so a keyboard or screen reader user is taken there. */
function Progress({ started }: { started: Started }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), [started]);
  const page = started.kind === 'Sandbox' ? `/sandboxes/${started.name}` : `/restores/${started.namespace}/${started.name}`;
  return (
    <section className="rst-step rst-step-progress" aria-labelledby="rst-progress">
      <h2 id="rst-progress" ref={heading} tabIndex={-1}>
        Progress
      </h2>
      <p>
        {started.message} <Link href={page}>{started.kind === 'Sandbox' ? `Sandbox ${started.name}` : `Restore ${started.name}`}</Link>
      </p>
      {started.kind === 'Sandbox' ? <FollowSandbox name={started.name} /> : <FollowRestore namespace={started.namespace} name={started.name} />}
    </section>
  );
}

function refusalField(refusal: unknown, field: 'at'): string | undefined {
  return refusal instanceof ApiError ? refusal.fieldError(pointerOf(field)) : undefined;
}

function momentFromLink(at: string | null): Moment {
  if (!at || at === 'latest') return { kind: 'latest' };
  const parsed = parseMoment(at);
  return parsed.ok ? { kind: 'at', at: parsed.at } : { kind: 'invalid', problem: parsed.problem };
}

function modeFromLink(mode: string | null, admin: boolean): RestoreMode {
  const known = MODES.find((m) => m === mode);
  return known && (known !== 'in-place' || admin) ? known : 'sandbox';
}
