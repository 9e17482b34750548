import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { ApiError } from '../../../api/problem.ts';
import { unwrap } from '../../../api/rest.ts';
import { useSession } from '../../../app/session.tsx';
import { fieldIndexOf, saveBody, type Draft, type DraftField } from './model.ts';

/** The role a draft without roles starts with, so a first field has someone to belong to (renamed at will). */
export const FIRST_ROLE = { name: 'signer', order: 1 };

/**
 * The draft being edited: a local copy of the saved draft (taken again whenever the saved one changes and nothing
 * local is unsaved), saved with PUT /draft and published with POST /publish. A refusal is kept with the field ids as
 * they were when it was sent, so its `/body/fields/<i>` pointers keep naming the same fields while the person edits.
 */
export function useDraft(templateId: string, saved: Draft, onChanged: () => void, onPublished: (message: string) => void) {
  const { rest } = useSession();
  const savedKey = JSON.stringify(saved);
  const [draft, setDraft] = useState<Draft>(() => withFirstRole(saved));
  const [dirty, setDirty] = useState(false);
  const [error, setError] = useState<unknown>();
  const [sentIds, setSentIds] = useState<string[]>([]);
  const [busy, setBusy] = useState<'save' | 'publish' | undefined>();
  const [notice, setNotice] = useState<string>();
  const dirtyRef = useRef(dirty);
  dirtyRef.current = dirty;
  // One write at a time, even when a key repeats faster than the buttons re-render.
  const running = useRef(false);

  useEffect(() => {
    if (!dirtyRef.current) setDraft(withFirstRole(JSON.parse(savedKey) as Draft));
  }, [savedKey]);

  const update = useCallback((change: (draft: Draft) => Draft) => {
    setDraft((current) => change(current));
    setDirty(true);
    setNotice(undefined);
  }, []);

  const send = useCallback(async () => {
    setSentIds(draft.fields.map((f) => f.id));
    await unwrap(rest.PUT('/v1/templates/{id}/draft', { params: { path: { id: templateId } }, body: saveBody(draft) }));
    setDirty(false);
  }, [draft, rest, templateId]);

  const run = useCallback(
    async (kind: 'save' | 'publish', job: () => Promise<string>) => {
      if (running.current) return;
      running.current = true;
      setBusy(kind);
      setError(undefined);
      setNotice(undefined);
      try {
        setNotice(await job());
        onChanged();
      } catch (e) {
        setError(e);
      } finally {
        running.current = false;
        setBusy(undefined);
      }
    },
    [onChanged],
  );

  const save = useCallback(() => run('save', async () => (await send(), 'Draft saved.')), [run, send]);
  const publish = useCallback(
    () =>
      run('publish', async () => {
        if (dirty) await send();
        const version = await unwrap(rest.POST('/v1/templates/{id}/publish', { params: { path: { id: templateId } } }));
        // Publishing consumes the draft, so this editor goes away: the page says what happened, where the focus goes
        // (said once: this editor's own status is left empty until it goes).
        onPublished(`Published as version ${String(version.version)}. Envelopes sent from this template now use it.`);
        return '';
      }),
    [dirty, onPublished, rest, run, send, templateId],
  );

  /** The pointer the last refusal used for this field (and member, e.g. `/x`), if it was in the draft sent. */
  const pointerOf = useCallback(
    (field: DraftField, member = '') => {
      const index = sentIds.indexOf(field.id);
      return index < 0 ? undefined : `/body/fields/${index}${member}`;
    },
    [sentIds],
  );

  /** Every detail of the last refusal about this field, whichever member it names. */
  const fieldProblems = useCallback(
    (field: DraftField): string[] => {
      if (!(error instanceof ApiError)) return [];
      return (error.problem.errors ?? []).filter((e) => fieldIndexOf(e.pointer) !== undefined && sentIds[fieldIndexOf(e.pointer) as number] === field.id).map((e) => e.detail);
    },
    [error, sentIds],
  );

  return useMemo(
    () => ({ draft, update, dirty, save, publish, busy, error, notice, pointerOf, fieldProblems }),
    [draft, update, dirty, save, publish, busy, error, notice, pointerOf, fieldProblems],
  );
}

export type DraftEditor = ReturnType<typeof useDraft>;

function withFirstRole(draft: Draft): Draft {
  return draft.roles.length > 0 ? draft : { ...draft, roles: [FIRST_ROLE] };
}
