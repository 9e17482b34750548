import { count as plural } from '../../format.ts';
import type { ApplyOutcome, ApplyResult } from './applyResources.ts';
import { ProblemList, SyntaxList } from './ProblemList.tsx';
import type { PlacedProblem, SyntaxProblem } from './yamlLines.ts';
import { Scroller } from '../../components/Scroller.tsx';

const beside = (count: number, mark: string) => `marked ${mark} beside ${count === 1 ? 'its line' : 'their lines'}`;

/** The sentence an outcome is summed up in (the editor is described by it while it marks lines). */
export function outcomeSummary(outcome: ApplyOutcome): string {
  if ('refused' in outcome) return `Nothing was applied: ${plural(outcome.problems.length, 'problem')}, ${beside(outcome.problems.length, '✖')}.`;
  const counts = (['created', 'updated', 'unchanged'] as const).map((action) => [action, outcome.applied.applied.filter((a) => a.action === action).length] as const);
  const parts = counts.filter(([, count]) => count > 0).map(([action, count]) => `${count} ${action}`);
  const warnings = outcome.applied.warnings?.length ?? 0;
  return `Applied ${plural(outcome.applied.applied.length, 'resource')}${parts.length ? ` (${parts.join(', ')})` : ''}${warnings ? `, with ${plural(warnings, 'warning')} ${beside(warnings, '▲')}` : ''}.`;
}

/**
 * A refused apply's problems, or what an apply did and its warnings; each problem with its line. Always rendered: a
 * success is announced by its status region, which must be on the page before its words change.
 */
export function ApplyOutcomeView({ outcome, placed, summaryId, onGoTo }: { outcome: ApplyOutcome | undefined; placed: readonly PlacedProblem[]; summaryId: string; onGoTo: (line: number) => void }) {
  const refused = outcome && 'refused' in outcome ? outcome : undefined;
  const applied = outcome && 'applied' in outcome ? outcome.applied : undefined;
  return (
    <div className="set-outcome">
      <div role="status">
        {applied && (
          <p id={summaryId} className="alert alert-success">
            {outcomeSummary({ applied })}
          </p>
        )}
      </div>
      {refused && (
        <>
          <p role="alert" id={summaryId} className="alert alert-error">
            {outcomeSummary(refused)}
          </p>
          <ProblemList problems={placed} label="Problems" onGoTo={onGoTo} />
        </>
      )}
      {applied && <AppliedTable applied={applied.applied} />}
      {applied && placed.length > 0 && (
        <>
          <h3>Warnings</h3>
          <p className="muted">Applied anyway; each resource's Ready condition says the same until it is fixed.</p>
          <ProblemList problems={placed} label="Warnings" onGoTo={onGoTo} />
        </>
      )}
    </div>
  );
}

function AppliedTable({ applied }: { applied: ApplyResult['applied'] }) {
  if (applied.length === 0) return null;
  return (
    <Scroller label="Applied resources">
      <thead>
        <tr>
          <th scope="col">Resource</th>
          <th scope="col">Kind</th>
          <th scope="col">Result</th>
        </tr>
      </thead>
      <tbody>
        {applied.map((item) => (
          <tr key={`${item.kind}/${item.namespace}/${item.name}`}>
            <th scope="row">
              {item.namespace}/{item.name}
            </th>
            <td>{item.kind}</td>
            <td>{item.action}</td>
          </tr>
        ))}
      </tbody>
    </Scroller>
  );
}

/** The text did not parse: every syntax error with its line (the API names only the first). */
export function SyntaxSection({ problems, summaryId, onGoTo }: { problems: readonly SyntaxProblem[]; summaryId: string; onGoTo: (line: number) => void }) {
  return (
    <div className="set-outcome">
      <p id={summaryId}>{`The YAML does not parse: ${plural(problems.length, 'syntax error')}, ${beside(problems.length, '✖')}.`}</p>
      <SyntaxList problems={problems} onGoTo={onGoTo} />
    </div>
  );
}
