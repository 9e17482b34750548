import { useState } from 'react';
import { Link } from 'react-aria-components';
import { useParams } from 'react-router';
import { useQuery } from 'urql';
import { FormError, Loading, Page } from '@sigil/web-ui';
import { useStrataEvents } from '../../api/events.ts';
import { useSession } from '../../app/session.tsx';
import { formatMoment } from '../../format.ts';
import { Connect } from './Credentials.tsx';
import { SandboxQuery, type Sandbox } from './detail-query.ts';
import { QueryEditor } from './QueryEditor.tsx';
import { SandboxActions } from './SandboxActions.tsx';
import { SandboxFacts } from './SandboxFacts.tsx';
import { TableBrowser } from './TableBrowser.tsx';
import './sandboxes.css';

/**
 * One sandbox: its facts, and for restorers its actions (extend, reset, delete), how to connect, the query editor and
 * the table browser. Live: the sandbox's own events and those of the restore that fills it.
 */
export default function SandboxDetail() {
  const { name = '' } = useParams();
  const { can } = useSession();
  const [notice, setNotice] = useState<string>();
  const [{ data, fetching, error }, refetch] = useQuery({ query: SandboxQuery, variables: { name } });
  const sandbox = data?.strataSandbox;
  const reload = () => refetch({ requestPolicy: 'network-only' });
  useStrataEvents(reload, { kinds: ['sandbox', 'restore'], filter: (event) => event.name === name || event.name === sandbox?.restore });

  if (!sandbox) {
    return (
      <Page title={name}>
        <FormError error={error} />
        {fetching && <Loading what="the sandbox" />}
        {data && (
          <p>
            There is no sandbox named {name}: it was deleted, or it expired and is gone. <Link href="/sandboxes">All sandboxes</Link>
          </p>
        )}
      </Page>
    );
  }
  const restorer = can('restorer');
  const done = (message: string) => {
    setNotice(message);
    reload();
  };
  return (
    <Page title={sandbox.name} description={describe(sandbox)} actions={restorer && <SandboxActions sandbox={sandbox} onDone={done} />}>
      <p>
        <Link href="/sandboxes">All sandboxes</Link>
      </p>
      <div role="status">{notice && <p className="alert alert-success">{notice}</p>}</div>
      <FormError error={error} />
      <SandboxFacts sandbox={sandbox} />
      {restorer ? (
        <>
          <Connect sandbox={sandbox} />
          <QueryEditor sandbox={sandbox} />
          <TableBrowser sandbox={sandbox} />
        </>
      ) : (
        <p className="alert alert-info">Querying this sandbox, browsing its tables, revealing its credentials, extending, resetting and deleting it need the role restorer.</p>
      )}
    </Page>
  );
}

function describe(s: Sandbox): string {
  const source = s.target ? `${s.target.namespace}/${s.target.name}` : 'a target';
  return s.time ? `A private ${s.engine} database restored from ${source}, its data as of ${formatMoment(Date.parse(s.time))}.` : `A private ${s.engine} database restored from ${source}.`;
}
