import { When } from '@sigil/web-ui';
import { actorOf, describeEntry, type TrailEntry } from './trail.ts';
import type { StreamState } from './useTrailStream.ts';

const STATE_WORDS: Record<StreamState, string> = {
  connecting: 'Connecting…',
  live: 'Live: new events appear as they happen.',
  reconnecting: 'Reconnecting… (events are caught up once back)',
};

/** What happened to the envelope, newest first, as the audit stream delivers it. New entries are announced politely. */
export function Timeline({ entries, state, nameOf }: { entries: readonly TrailEntry[]; state: StreamState; nameOf: (recipientId: string) => string | undefined }) {
  const newestFirst = [...entries].reverse();
  const latest = newestFirst[0];
  return (
    <section aria-labelledby="env-timeline">
      <h2 id="env-timeline">Timeline</h2>
      <p className="muted env-live">{STATE_WORDS[state]}</p>
      <p className="visually-hidden" aria-live="polite">
        {latest && state === 'live' ? describeEntry(latest, nameOf) : ''}
      </p>
      {entries.length === 0 && state === 'live' && <p className="muted">Nothing recorded yet.</p>}
      <ol className="env-timeline" reversed>
        {newestFirst.map((entry) => {
          const actor = actorOf(entry);
          return (
            <li key={entry.seq}>
              <div className="what">{describeEntry(entry, nameOf)}</div>
              <div className="muted small">
                <When at={entry.at} />
                {actor && <> · {actor}</>}
              </div>
            </li>
          );
        })}
      </ol>
    </section>
  );
}
