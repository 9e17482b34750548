import { useEffect, useState } from 'react';
import { FieldError, Input, Label, Text, TextField } from 'react-aria-components';
import { formatMomentInput, formatUtc, MOMENT_FORMAT, parseMoment, zoneLabel, type Moment } from './moment.ts';

/**
 * "Moment (your time zone)": the moment typed to the second in the browser's time zone, its UTC form and the time
 * zone's name under it, live. It follows the timeline (a moment picked there is written here) and leads it (a moment
 * typed here moves the timeline's marker). `apiProblem` is the API's refusal about the moment (422: not restorable).
 */
export function MomentField({ moment, shownAt, onMoment, apiProblem, showProblem, onShowProblem }: {
  moment: Moment;
  /** The moment written in the field when it is not typed: the one picked, or what latest is now. */
  shownAt: number | undefined;
  onMoment(moment: Moment): void;
  apiProblem?: string;
  /** Whether a typing problem is said yet (after leaving the field, or pressing Start): not at every keystroke. */
  showProblem: boolean;
  onShowProblem(): void;
}) {
  const [text, setText] = useState(shownAt === undefined ? '' : formatMomentInput(shownAt));
  const parsed = parseMoment(text);

  // A moment set elsewhere (the timeline, a "Use … instead" button, Latest) is written here, unless it is already.
  useEffect(() => {
    if (shownAt === undefined || moment.kind === 'invalid') return;
    if (!(parsed.ok && parsed.at === shownAt)) setText(formatMomentInput(shownAt));
  }, [shownAt, moment.kind]);

  const change = (value: string) => {
    setText(value);
    const next = parseMoment(value);
    onMoment(next.ok ? { kind: 'at', at: next.at } : { kind: 'invalid', problem: next.problem });
  };
  const typingProblem = !parsed.ok && showProblem ? parsed.problem : undefined;
  const problem = typingProblem ?? apiProblem;
  return (
    <TextField className="field rst-moment-field" value={text} onChange={change} onBlur={onShowProblem} isInvalid={problem !== undefined} validationBehavior="aria" data-rst-field="at">
      <Label>Moment (your time zone)</Label>
      <Input placeholder={MOMENT_FORMAT} spellCheck={false} autoComplete="off" />
      <Text slot="description">{parsed.ok ? <UtcLine at={parsed.at} laterTwin={parsed.laterTwin} /> : `As ${MOMENT_FORMAT}, in ${zoneLabel(Date.now())}; or an RFC 3339 time with Z or an offset.`}</Text>
      <FieldError className="react-aria-FieldError rst-field-error">{problem}</FieldError>
    </TextField>
  );
}

function UtcLine({ at, laterTwin }: { at: number; laterTwin?: number }) {
  return (
    <>
      <span className="rst-utc">{formatUtc(at)}</span> · your time zone: {zoneLabel(at)}
      {laterTwin !== undefined && (
        <>
          {' '}
          · this time happens twice here (the clocks went back); this is the first. For the second, type {new Date(laterTwin).toISOString().replace('.000Z', 'Z')}.
        </>
      )}
    </>
  );
}
