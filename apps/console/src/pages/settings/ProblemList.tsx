import { Button } from 'react-aria-components';
import type { PlacedProblem, SyntaxProblem } from './yamlLines.ts';

/** `BackupPolicy default/nightly`, or `document 3` when the document names no kind. */
function resourceOf(problem: PlacedProblem): string {
  const kind = problem.kind || `document ${problem.document}`;
  return problem.name ? `${kind} ${problem.namespace}/${problem.name}` : kind;
}

/** Where a problem is: `Line 8`, or its document's number when the text no longer has that document. */
function whereOf(problem: PlacedProblem): string {
  return problem.line === undefined ? `Document ${problem.document}` : `Line ${problem.line}`;
}

/**
 * The problems (or warnings) of an apply, each as "Line N: <path>: <message>" with the resource it is about, and a
 * button that puts the cursor on its line.
 */
export function ProblemList({ problems, label, onGoTo }: { problems: readonly PlacedProblem[]; label: string; onGoTo: (line: number) => void }) {
  return (
    <ul className="set-problems" aria-label={label}>
      {problems.map((problem, index) => (
        <li key={index}>
          <span>
            <strong>{whereOf(problem)}:</strong> {problem.path ? <code>{problem.path}</code> : 'the whole document'}
: {problem.message} <span className="muted">({resourceOf(problem)})</span>
          </span>
          {problem.line !== undefined && <GoToLine line={problem.line} onGoTo={onGoTo} />}
        </li>
      ))}
    </ul>
  );
}

/** YAML syntax errors (the text did not parse), each with its line. */
export function SyntaxList({ problems, onGoTo }: { problems: readonly SyntaxProblem[]; onGoTo: (line: number) => void }) {
  return (
    <ul className="set-problems" aria-label="YAML syntax errors">
      {problems.map((problem, index) => (
        <li key={index}>
          <span>
            <strong>Line {problem.line}:</strong> {problem.message}
          </span>
          <GoToLine line={problem.line} onGoTo={onGoTo} />
        </li>
      ))}
    </ul>
  );
}

function GoToLine({ line, onGoTo }: { line: number; onGoTo: (line: number) => void }) {
  return (
    <Button className="button set-small-button" onPress={() => onGoTo(line)}>
      Go to line {line}
    </Button>
  );
}
