import { useMemo, useRef, useState } from 'react';
import { Button, FileTrigger } from 'react-aria-components';
import { BusyButton, FormError, useAction } from '@sigil/web-ui';
import { useSession } from '../../app/session.tsx';
import { applyResources, type ApplyOutcome } from './applyResources.ts';
import { ApplyOutcomeView, SyntaxSection } from './ApplyOutcomeView.tsx';
import { placeProblems, syntaxProblems, type PlacedProblem, type SyntaxProblem } from './yamlLines.ts';
import { YamlEditor, type LineMark, type YamlEditorHandle } from './YamlEditor.tsx';

const EDITOR_ID = 'resources-yaml';
const OUTCOME_ID = 'resources-outcome';
const SYNTAX_ID = 'resources-syntax';

/**
 * Applying declarative resources (restorer-admin): YAML written here or loaded from a file, sent as it is. A refusal
 * shows every problem against its line (the gutter marks it, the list under the editor moves the cursor there);
 * a success lists what was applied and its warnings the same way.
 */
export function ApplyResources({ onApplied }: { onApplied: () => void }) {
  const { rest } = useSession();
  const [text, setText] = useState('');
  const [notice, setNotice] = useState('');
  const [outcome, setOutcome] = useState<ApplyOutcome>();
  const action = useAction();
  const editor = useRef<YamlEditorHandle>(null);
  const goTo = (line: number) => editor.current?.goToLine(line);

  const reported = useMemo(() => (!outcome ? [] : 'refused' in outcome ? outcome.problems : (outcome.applied.warnings ?? [])), [outcome]);
  // Placed against the text as it is now: the lines follow the person's edits after the apply.
  const placed = useMemo(() => (reported.length ? placeProblems(text, reported) : []), [text, reported]);
  // A refusal without its problems listed may be a YAML syntax error: the parser finds every one, with its line.
  const syntax = useMemo(() => (action.error ? syntaxProblems(text) : []), [action.error, text]);
  const marks = useMemo(() => lineMarks(placed, outcome && 'refused' in outcome ? 'problem' : 'warning', syntax), [placed, outcome, syntax]);
  const describedBy = [syntax.length ? SYNTAX_ID : '', placed.length ? OUTCOME_ID : ''].filter(Boolean).join(' ');

  async function apply() {
    setOutcome(undefined);
    setNotice('');
    if (!text.trim()) {
      action.reset();
      setNotice('Write or load at least one resource first.');
      return;
    }
    const result = await action.run(() => applyResources(rest, text)).catch(() => undefined);
    setOutcome(result);
    if (result && 'applied' in result) onApplied();
  }

  async function load(files: FileList | null) {
    const file = files?.[0];
    if (!file) return;
    setText(await file.text());
    setOutcome(undefined);
    action.reset();
    setNotice(`Loaded ${file.name}.`);
  }

  return (
    <section className="set-panel" aria-labelledby="apply-heading">
      <h2 id="apply-heading">Apply resources</h2>
      <p className="muted">
        Stores, policies, targets, backups, restores and secrets as YAML documents (separated by <code>---</code>, or a <code>kind: List</code>). Nothing is applied unless every document is valid.
      </p>
      <label className="set-label" htmlFor={EDITOR_ID}>
        Resources (YAML)
      </label>
      <YamlEditor id={EDITOR_ID} value={text} onChange={setText} marks={marks} describedBy={describedBy || undefined} handle={editor} />
      <div className="set-actions">
        <BusyButton className="button button-primary" busy={action.busy} busyLabel="Applying…" onPress={apply}>
          Apply
        </BusyButton>
        <FileTrigger acceptedFileTypes={['.yaml', '.yml', 'application/yaml', 'text/yaml']} onSelect={load}>
          <Button className="button">Load a YAML file…</Button>
        </FileTrigger>
        <span role="status" className="muted">
          {notice}
        </span>
      </div>
      <FormError error={action.error} />
      {syntax.length > 0 && <SyntaxSection problems={syntax} summaryId={SYNTAX_ID} onGoTo={goTo} />}
      <ApplyOutcomeView outcome={outcome} placed={placed} summaryId={OUTCOME_ID} onGoTo={goTo} />
    </section>
  );
}

function lineMarks(placed: readonly PlacedProblem[], mark: LineMark, syntax: readonly SyntaxProblem[]): Map<number, LineMark> {
  const marks = new Map<number, LineMark>();
  for (const problem of placed) if (problem.line !== undefined) marks.set(problem.line, mark);
  for (const problem of syntax) marks.set(problem.line, 'problem');
  return marks;
}
