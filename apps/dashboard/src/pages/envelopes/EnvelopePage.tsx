import { useCallback, useRef, useState } from 'react';
import { useParams } from 'react-router';
import { useQuery } from 'urql';
import { useSession } from '../../app/session.tsx';
import { graphql } from '../../gql/index.ts';
import { AuditTrail } from './AuditTrail.tsx';
import { Documents } from './Documents.tsx';
import { Recipients } from './Recipients.tsx';
import { SEAL_STATUS_LABELS, type SealStatus } from './status.ts';
import { Timeline } from './Timeline.tsx';
import { useTrailStream } from './useTrailStream.ts';
import { Viewers } from './Viewers.tsx';
import { VoidEnvelope } from './VoidEnvelope.tsx';
import './envelopes.css';
import { Loading, Page, StatusBadge, When } from '@sigil/web-ui';

const EnvelopeQuery = graphql(`
  query EnvelopePage($id: ID!) {
    envelope(id: $id) {
      id
      status
      seal
      testMode
      externalId
      templateVersion
      pageCount
      expiresAt
      createdAt
      sentAt
      completedAt
      voidReason
      renderError
      sealError
      template {
        id
        name
      }
      recipients {
        id
        role
        name
        email
        order
        delivery
        verification
        status
        hasTurn
        sentAt
        viewedAt
        completedAt
        declinedAt
      }
      viewers {
        id
        email
        name
        documentAccess
        createdAt
        firstOpenedAt
        revokedAt
      }
      sealing {
        status
        sealedSha256
        certificateSha256
      }
    }
  }
`);

/** Reads the envelope and its trail again once a burst of new entries has arrived (a signature brings several). */
function useDebounced(run: () => void, ms = 150): () => void {
  const timer = useRef<ReturnType<typeof setTimeout>>(undefined);
  const latest = useRef(run);
  latest.current = run;
  return useCallback(() => {
    clearTimeout(timer.current);
    timer.current = setTimeout(() => latest.current(), ms);
  }, [ms]);
}

export default function EnvelopePage() {
  const { id = '' } = useParams();
  const { can } = useSession();
  const [{ data, fetching, error }, refetch] = useQuery({ query: EnvelopeQuery, variables: { id } });
  // Each new trail entry: the envelope and its audit trail are read again.
  const [trailVersion, setTrailVersion] = useState(0);
  const refresh = useDebounced(() => {
    setTrailVersion((v) => v + 1);
    refetch({ requestPolicy: 'network-only' });
  });
  const envelope = data?.envelope;
  const stream = useTrailStream(envelope ? id : undefined, refresh);

  if (fetching && !data) return <Loading what="the envelope" />;
  if (!envelope && error) {
    return (
      <Page title="Envelope">
        <p role="alert" className="alert alert-error">
          {error.message}
        </p>
      </Page>
    );
  }
  if (!envelope) {
    return (
      <Page title="Envelope not found">
        <p>No envelope {id} in your organization.</p>
      </Page>
    );
  }
  const nameOf = (recipientId: string) => envelope.recipients.find((r) => r.id === recipientId)?.name;
  return (
    <Page
      title={envelope.template.name}
      description={
        <>
          Envelope <code>{envelope.id}</code> · <StatusBadge status={envelope.status} />
          {envelope.testMode && <> · test envelope</>}
        </>
      }
      actions={can('envelope:void') && (envelope.status === 'rendering' || envelope.status === 'sent') ? <VoidEnvelope envelopeId={envelope.id} onVoided={refresh} /> : undefined}
    >
      {envelope.voidReason && <p className="alert alert-info">Voided: {envelope.voidReason}</p>}
      {envelope.renderError && <p className="alert alert-error">Preparing the document failed (retrying): {envelope.renderError}</p>}
      {envelope.sealError && <p className="alert alert-error">Sealing failed (retrying): {envelope.sealError}</p>}
      <Recipients envelopeId={envelope.id} recipients={envelope.recipients} envelopeStatus={envelope.status} />
      <Viewers envelopeId={envelope.id} envelopeStatus={envelope.status} viewers={envelope.viewers} onChanged={refresh} />
      <div className="env-grid">
        <div>
          <section aria-labelledby="env-details">
            <h2 id="env-details">Details</h2>
            <dl className="env-facts">
              <dt>Template</dt>
              <dd>
                {envelope.template.name}, version {envelope.templateVersion} ({envelope.pageCount} {envelope.pageCount === 1 ? 'page' : 'pages'})
              </dd>
              {envelope.externalId && (
                <>
                  <dt>External ID</dt>
                  <dd>{envelope.externalId}</dd>
                </>
              )}
              <dt>Created</dt>
              <dd><When at={envelope.createdAt} /></dd>
              <dt>Sent</dt>
              <dd><When at={envelope.sentAt} /></dd>
              <dt>Completed</dt>
              <dd><When at={envelope.completedAt} /></dd>
              <dt>Expires</dt>
              <dd><When at={envelope.expiresAt} /></dd>
              <dt>Seal</dt>
              <dd>{SEAL_STATUS_LABELS[envelope.seal as SealStatus] ?? envelope.seal}</dd>
            </dl>
          </section>
          <Documents envelope={envelope} />
          <AuditTrail envelopeId={envelope.id} version={trailVersion} />
        </div>
        <Timeline entries={stream.entries} state={stream.state} nameOf={nameOf} />
      </div>
    </Page>
  );
}
