import { useState } from 'react';
import { useQuery } from 'urql';
import { DialogButton, Page, PagedBodies, PagedRows, type PageSlot } from '@sigil/web-ui';
import { useLive } from '../../api/live.ts';
import { upgradeHref } from '../../api/plan.ts';
import { useSession } from '../../app/session.tsx';
import { UpgradeNotice } from '../../app/UpgradeNotice.tsx';
import { graphql } from '../../gql/index.ts';
import { LinkRow } from './LinkRow.tsx';
import { NewSigningLink } from './NewSigningLink.tsx';
import '../developers/developers.css';
import './links.css';

const SigningLinksQuery = graphql(`
  query SigningLinks($after: String) {
    signingLinks(first: 25, after: $after) {
      nodes {
        id
        url
        status
        testMode
        version
        role
        title
        createdAt
        template {
          id
          name
        }
        limits {
          perEmailPerDay
          perIpPerHour
          dailyCap
        }
        usage {
          today
          total
        }
      }
      hasMore
      nextCursor
    }
  }
`);

/** Whether the plan has signing links, for those who may read the plan (billing:manage); others learn it on create. */
const PlanQuery = graphql(`
  query SigningLinksPlan {
    organization {
      id
      billing {
        planName
        entitlements {
          features {
            signingLinks
          }
        }
      }
    }
  }
`);

export default function SigningLinks() {
  const { can, mode } = useSession();
  const [generation, setGeneration] = useState(0);
  const [{ data: plan }] = useQuery({ query: PlanQuery, pause: !can('billing:manage'), requestPolicy: 'cache-and-network' });
  const billing = plan?.organization?.billing;
  const offPlan = billing ? !billing.entitlements.features.signingLinks : false;
  return (
    <Page
      title="Signing links"
      description={`Always-on links anyone can open to sign one of your templates after confirming their e-mail address. Showing ${mode} links; switch the mode to see the others.`}
      actions={
        can('envelope:send') && !offPlan ? (
          <DialogButton label="New signing link" title="New signing link" variant="button button-primary">
            {(close) => <NewSigningLink close={close} onCreated={() => setGeneration((g) => g + 1)} />}
          </DialogButton>
        ) : undefined
      }
    >
      {offPlan && billing && (
        <UpgradeNotice
          lead={`Signing links are not on the ${billing.planName} plan.`}
          refusal={{ detail: 'Upgrade to Team or Business to publish always-on links; the links below keep their settings.', href: upgradeHref(undefined, window.location.origin) }}
        />
      )}
      {/* A new mode or a new link starts the list again from its first page. */}
      <LinkTable key={`${mode}-${generation}`} mode={mode} />
    </Page>
  );
}

function LinkTable({ mode }: { mode: 'test' | 'live' }) {
  return (
    <div className="table-wrap" role="region" aria-label="Signing links table" tabIndex={0}>
      <table className="table links-table">
        <caption className="visually-hidden">Signing links in {mode} mode, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Link</th>
            <th scope="col">Template</th>
            <th scope="col">Used today</th>
            <th scope="col">Total</th>
            <th scope="col">
              <span className="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <PagedBodies>{(slot) => <LinkPage mode={mode} slot={slot} />}</PagedBodies>
      </table>
    </div>
  );
}

/** One page of links (25), as a table body, read again when a link is created or used (the usage moves). */
function LinkPage({ mode, slot }: { mode: 'test' | 'live'; slot: PageSlot }) {
  const [{ data, fetching, error }, refetch] = useQuery({ query: SigningLinksQuery, variables: { after: slot.after } });
  const refresh = () => refetch({ requestPolicy: 'network-only' });
  useLive(refresh, { mode, types: ['signing_link.'] });
  return (
    <PagedRows
      slot={slot}
      page={data?.signingLinks}
      fetching={fetching}
      error={error}
      columns={5}
      what="signing links"
      empty={<span className="muted">No {mode} signing links yet. Create one and share its URL: each visitor signs their own copy of the template.</span>}
      olderLabel="Show older links"
    >
      {(link) => <LinkRow link={link} onChanged={refresh} />}
    </PagedRows>
  );
}
