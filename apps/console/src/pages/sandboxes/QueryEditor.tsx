import { useId, useRef, useState, type KeyboardEvent } from 'react';
import { Button, Checkbox, Dialog, FieldError, Heading, Input, Label, Modal, ModalOverlay, NumberField, Text, TextArea, TextField } from 'react-aria-components';
import { BusyButton, FormError, SelectField, useAction } from '@sigil/web-ui';
import { unwrap } from '../../api/rest.ts';
import { useSession } from '../../app/session.tsx';
import type { Sandbox } from './detail-query.ts';
import { ResultGrid, type QueryResult } from './ResultGrid.tsx';

const DEFAULT_LIMIT = 100;

/**
 * One SQL statement run in the sandbox (`POST /sandboxes/{name}/query`), its rows shown in the grid. Reads run in a
 * read-only transaction; "Allow writes" sends `write: true`, after a confirmation, since it changes the sandbox's data.
 */
export function QueryEditor({ sandbox }: { sandbox: Pick<Sandbox, 'name' | 'database' | 'databases' | 'phase'> }) {
  const { rest } = useSession();
  const [sql, setSql] = useState('');
  const [empty, setEmpty] = useState(false);
  const [database, setDatabase] = useState(sandbox.database);
  const [limit, setLimit] = useState(DEFAULT_LIMIT);
  const [allowWrites, setAllowWrites] = useState(false);
  const [confirming, setConfirming] = useState(false);
  // Where focus goes back when the confirmation closes: the Run button, or the SQL after Ctrl+Enter (react-aria's own
  // restore lands on the body after a keyboard press, the dialog having no trigger).
  const editorRef = useRef<HTMLTextAreaElement>(null);
  const runId = useId();
  const returnFocus = useRef<HTMLElement | null>(null);
  const [result, setResult] = useState<QueryResult>();
  const query = useAction();

  async function run(write: boolean) {
    setResult(undefined);
    const body = { sql, database, ...(Number.isFinite(limit) ? { limit } : {}), ...(write ? { write: true } : {}) };
    // JSON, not the text table the operation also offers (its answer type is the union of both).
    const call = () => rest.POST('/sandboxes/{name}/query', { params: { path: { name: sandbox.name } }, body, headers: { accept: 'application/json' } });
    const answer = await query.run(() => unwrap(call())).catch(() => undefined);
    if (answer && typeof answer !== 'string') setResult(answer);
  }
  function start(from: 'editor' | 'button') {
    if (query.busy) return;
    setEmpty(sql.trim() === '');
    if (sql.trim() === '') return;
    if (!allowWrites) return void run(false);
    returnFocus.current = from === 'editor' ? editorRef.current : document.getElementById(runId);
    setConfirming(true);
  }
  function onKeyDown(event: KeyboardEvent) {
    if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      start('editor');
    }
  }
  const databases = sandbox.databases.length > 0 ? sandbox.databases : [sandbox.database];
  return (
    <section aria-labelledby="sbx-query" className="sbx-panel">
      <h2 id="sbx-query">Query</h2>
      {sandbox.phase !== 'Ready' && <p className="muted">Queries run once the sandbox is Ready; it is {sandbox.phase} now.</p>}
      <TextField
        className="field sbx-sql"
        value={sql}
        onChange={(text) => {
          setSql(text);
          if (text.trim()) setEmpty(false);
        }}
        isInvalid={empty}
        validationBehavior="aria"
      >
        <Label>SQL</Label>
        <TextArea ref={editorRef} rows={6} spellCheck={false} onKeyDown={onKeyDown} aria-keyshortcuts="Control+Enter" />
        <Text slot="description">One statement. Ctrl+Enter runs it. Reads run in a read-only transaction, with the target’s masks applied.</Text>
        <FieldError>Write a statement to run.</FieldError>
      </TextField>
      <div className="sbx-query-options">
        <SelectField label="Database" options={databases.map((d) => ({ id: d, name: d }))} value={database} onChange={setDatabase} />
        <NumberField className="field sbx-limit" value={limit} onChange={setLimit} minValue={1} maxValue={1000} step={1}>
          <Label>Row limit</Label>
          <Input />
          <Text slot="description">1 to 1000</Text>
        </NumberField>
        <div className="sbx-writes">
          <Checkbox className="checkbox sbx-checkbox" isSelected={allowWrites} onChange={setAllowWrites} aria-describedby="sbx-writes-help">
            <span className="sbx-box" aria-hidden="true" />
            Allow writes
          </Checkbox>
          <p id="sbx-writes-help" className="muted small">
            The statement then runs outside the read-only transaction and may change the sandbox’s data (a reset restores it).
          </p>
        </div>
      </div>
      <div className="sbx-run">
        <BusyButton id={runId} className="button button-primary" busy={query.busy} busyLabel="Running…" onPress={() => start('button')}>
          Run
        </BusyButton>
      </div>
      <FormError error={query.error} />
      {result && <ResultGrid result={result} label="Query result" truncatedNote="raise the row limit (at most 1000) to see more." />}
      <ConfirmWrite
        isOpen={confirming}
        onOpenChange={(open) => {
          setConfirming(open);
          if (!open) requestAnimationFrame(() => returnFocus.current?.focus());
        }}
        onConfirm={() => void run(true)}
      />
    </section>
  );
}

/** The confirmation a write asks for. */
function ConfirmWrite({ isOpen, onOpenChange, onConfirm }: { isOpen: boolean; onOpenChange: (open: boolean) => void; onConfirm: () => void }) {
  return (
    <ModalOverlay isOpen={isOpen} onOpenChange={onOpenChange} isDismissable>
      <Modal>
        <Dialog role="alertdialog">
          {({ close }) => (
            <>
              <Heading slot="title">Run as a write?</Heading>
              <p>Run as a write: it changes the sandbox’s data. The statement runs outside the read-only transaction; what it writes stays until the sandbox is reset or deleted.</p>
              <div className="dialog-actions">
                <Button className="button" slot="close">
                  Cancel
                </Button>
                <Button
                  className="button button-danger"
                  onPress={() => {
                    close();
                    onConfirm();
                  }}
                >
                  Run as a write
                </Button>
              </div>
            </>
          )}
        </Dialog>
      </Modal>
    </ModalOverlay>
  );
}
