import { Link } from 'react-aria-components';
import { useParams } from 'react-router';
import { useQuery } from 'urql';
import { FormError, Loading, Page } from '@sigil/web-ui';
import { useStrataEvents } from '../../api/events.ts';
import { formatMoment } from '../../format.ts';
import { refusalOf } from '../../api/graphql-refusal.ts';
import { RestoreFacts } from './RestoreFacts.tsx';
import { RestoreProgress } from './RestoreProgress.tsx';
import { RestoreQuery, SandboxFollowQuery, type RestoreView } from './restore-queries.ts';
import './restores.css';

const MODE_WORDS: Record<string, string> = { sandbox: 'into a sandbox', new: 'into a new database', 'in-place': 'in place', download: 'as a download' };

/**
 * `/restores/:ns/:name`: one restore. Its progress live to the end (the mover's message, prominently, when it
 * failed; the sandbox, the download link while valid, the new database when it succeeded), then where it came from,
 * where it went, its plan and its checks.
 */
export default function RestoreDetail() {
  const { ns = '', name = '' } = useParams();
  const [{ data, fetching, error }, refetch] = useQuery({ query: RestoreQuery, variables: { namespace: ns, name } });
  const restore = data?.strataRestore;
  const sandboxName = restore?.mode === 'sandbox' ? restore.sandbox : '';
  const [{ data: sandboxData }, refetchSandbox] = useQuery({ query: SandboxFollowQuery, variables: { name: sandboxName }, pause: !sandboxName });
  useStrataEvents(
    () => {
      refetch({ requestPolicy: 'network-only' });
      if (sandboxName) refetchSandbox({ requestPolicy: 'network-only' });
    },
    { kinds: ['restore', 'sandbox'], filter: (event) => event.name === name || (sandboxName !== '' && event.name === sandboxName) },
  );

  if (!restore) {
    return (
      <Page title={name}>
        <FormError error={refusalOf(error)} />
        {fetching && <Loading what="the restore" />}
        {data && (
          <p>
            There is no restore {ns}/{name}, or its target is not in your scope. <Link href="/restores">All restores</Link>
          </p>
        )}
      </Page>
    );
  }
  const sandbox = sandboxData?.strataSandbox;
  // A sandbox that expired or was deleted is gone from the sandbox service: the restore still says where it went.
  const sandboxGone = sandboxName !== '' && sandboxData !== undefined && !sandbox;
  const filled = sandbox ? { name: sandbox.name, phase: sandbox.phase, message: sandbox.message } : sandboxGone ? { name: sandboxName, phase: 'Gone', message: '' } : undefined;
  return (
    <Page title={restore.name} description={describe(restore)}>
      <p>
        <Link href="/restores">All restores</Link>
      </p>
      <section className="rst-step" aria-labelledby="rst-detail-progress">
        <h2 id="rst-detail-progress">Progress</h2>
        <RestoreProgress restore={restore} {...(filled ? { sandbox: filled } : {})} />
      </section>
      <RestoreFacts restore={restore} sandboxGone={sandboxGone} />
    </Page>
  );
}

function describe(r: RestoreView): string {
  const target = `${r.target.namespace}/${r.target.name}`;
  return `A restore of ${target} ${MODE_WORDS[r.mode] ?? r.mode}, requested by ${r.requestedBy || 'someone unknown'} on ${formatMoment(Date.parse(r.created))}.`;
}
