import { useMemo } from 'react';
import { Label, Radio, RadioGroup } from 'react-aria-components';
import { FormError, Loading } from '@sigil/web-ui';
import { Timeline } from '../../components/timeline/Timeline.tsx';
import { MomentField } from './MomentField.tsx';
import { MomentVerdict } from './MomentVerdict.tsx';
import type { Moment } from './moment.ts';
import { latestMoment, verdictOf } from './restorable.ts';
import { rangeOf } from '../../components/timeline/fragment.ts';
import { restorableFulls } from './timeline-data.ts';
import type { TargetTimelineState } from './use-timeline.ts';
import type { WizardTarget } from './wizard-queries.ts';

export interface MomentStepProps {
  target: WizardTarget;
  timeline: TargetTimelineState;
  moment: Moment;
  onMoment(moment: Moment): void;
  apiProblem?: string;
  showProblem: boolean;
  onShowProblem(): void;
}

/**
 * Step 2, the moment: Latest, or a moment picked on the timeline (a slider: arrows, Home/End, + and - to zoom to
 * seconds) or typed in the person's time zone; the two follow each other, and whether it can be restored is said at
 * once, with the nearest moments that can be when it cannot.
 */
export function MomentStep({ target, timeline, moment, onMoment, apiProblem, showProblem, onShowProblem }: MomentStepProps) {
  const windows = useMemo(() => target.windows.map(rangeOf), [target.windows]);
  const fulls = useMemo(() => restorableFulls(target), [target]);
  const latestAt = latestMoment(windows, fulls);
  const shownAt = moment.kind === 'at' ? moment.at : moment.kind === 'latest' ? latestAt : undefined;
  const verdict = moment.kind === 'at' ? verdictOf(moment.at, windows, fulls) : undefined;
  const { data, range, limit } = timeline;
  return (
    <>
      <p className="muted">
        {target.pitr
          ? 'Green on the timeline is where this target can be restored to any second (a full backup plus its change log); grey is not.'
          : 'This target has no change capture: a restore gives the newest full backup at or before the moment.'}
        {target.chainBroken && target.chainBrokenReason ? ` Its change log is broken: ${target.chainBrokenReason}.` : ''}
      </p>
      <RadioGroup className="rst-choice" value={moment.kind === 'latest' ? 'latest' : 'at'} onChange={(value) => onMoment(value === 'latest' ? { kind: 'latest' } : { kind: 'at', at: shownAt ?? Date.now() })}>
        <Label>Restore to</Label>
        <div className="rst-radios">
          <Radio value="latest" className="radio">
            <span className="rst-dot" aria-hidden="true" />
            Latest
          </Radio>
          <Radio value="at" className="radio">
            <span className="rst-dot" aria-hidden="true" />A moment I pick
          </Radio>
        </div>
      </RadioGroup>
      <MomentField moment={moment} shownAt={shownAt} onMoment={onMoment} apiProblem={apiProblem} showProblem={showProblem} onShowProblem={onShowProblem} />
      <MomentVerdict moment={moment} verdict={verdict} latestAt={latestAt} onUse={(at) => onMoment({ kind: 'at', at })} />
      <FormError error={timeline.error} />
      {data && range && limit ? (
        <>
          <p className="muted small" id="rst-timeline-help">
            On the timeline: click a moment, or focus it and use the arrow keys (Shift for bigger steps), Home and End, + and - to zoom in to seconds.
          </p>
          <Timeline
            data={data}
            range={range}
            limit={limit}
            onRangeChange={timeline.setRange}
            selected={shownAt}
            onSelect={(at) => onMoment({ kind: 'at', at })}
            label={`Moment to restore ${target.namespace}/${target.name} to`}
          />
        </>
      ) : (
        !timeline.error && <Loading what="the timeline" />
      )}
    </>
  );
}
