import { Link } from 'react-aria-components';
import { useParams, useSearchParams } from 'react-router';
import { Page } from '@sigil/web-ui';
import { formatMoment } from '../../format.ts';
import { ChangesList } from './ChangesList.tsx';
import './insight.css';

/** A moment of the address (RFC 3339) as people read it, or the words for one not given. */
const shown = (at: string | null, otherwise: string) => (at && !Number.isNaN(Date.parse(at)) ? formatMoment(Date.parse(at)) : (at ?? otherwise));

/** What a target's change log did between two times (`?since=&until=`, RFC 3339; by default the last day), segment by segment. */
export default function ChangesPage() {
  const { ns = '', name = '' } = useParams();
  const [search] = useSearchParams();
  const since = search.get('since') ?? '24h';
  const until = search.get('until') ?? undefined;
  return (
    <Page title="Changes" description={`${ns}/${name}: ${search.get('since') ? `from ${shown(since, since)}` : 'the last 24 hours'} to ${shown(until ?? null, 'now')}`}>
      <p>
        <Link href={`/targets/${encodeURIComponent(ns)}/${encodeURIComponent(name)}`}>Back to {ns}/{name}</Link>
      </p>
      <section aria-labelledby="changes-heading" className="target-section">
        <h2 id="changes-heading">Change-log segments</h2>
        <ChangesList namespace={ns} name={name} since={since} until={until} label="Change-log segments" />
      </section>
    </Page>
  );
}
