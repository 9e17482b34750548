import { BusyButton, ConfirmButton, CopyButton, FormError, StatusBadge, useAction } from '@sigil/web-ui';
import { planRefusal } from '../../api/plan.ts';
import { unwrap } from '../../api/rest.ts';
import { useSession } from '../../app/session.tsx';
import { UpgradeNotice } from '../../app/UpgradeNotice.tsx';
import type { SigningLinksQuery } from '../../gql/graphql.ts';
import { capReached, capShare, envelopes, limitWords, todayWords } from './usage.ts';

export type LinkNode = SigningLinksQuery['signingLinks']['nodes'][number];

/** One link: what it sends and to whom, today's use against its caps, and copy, pause or resume, delete. */
export function LinkRow({ link, onChanged }: { link: LinkNode; onChanged: () => void }) {
  const { can } = useSession();
  const share = capShare(link.usage, link.limits);
  const full = capReached(link.usage, link.limits);
  return (
    <tr>
      <th scope="row" className="link-cell">
        <span className="link-title">
          {link.title} <StatusBadge status={link.status} />
        </span>
        <div className="muted small">
          Visitors sign as <strong>{link.role}</strong>
        </div>
        <code className="link-url small">{link.url}</code>
      </th>
      <td>
        {link.template.name}
        <div className="muted small">version {link.version}</div>
      </td>
      <td className="link-usage">
        <span className={full ? 'link-full' : undefined}>{todayWords(link.usage, link.limits)}</span>
        {share !== undefined && (
          <span className="link-meter" aria-hidden="true">
            <span style={{ inlineSize: `${Math.round(share * 100)}%` }} className={full ? 'link-meter-full' : undefined} />
          </span>
        )}
        {full && <div className="small link-full">Daily cap reached: visitors are turned away until tomorrow (UTC).</div>}
        <div className="muted small link-limits">{limitWords(link.limits)}</div>
      </td>
      <td>{envelopes(link.usage.total)}</td>
      <td>
        <div className="link-actions">
          <CopyButton text={link.url} label="Copy link" />
          {can('envelope:send') && <LinkControls link={link} onChanged={onChanged} />}
        </div>
      </td>
    </tr>
  );
}

function LinkControls({ link, onChanged }: { link: LinkNode; onChanged: () => void }) {
  const { rest } = useSession();
  const toggle = useAction();
  const remove = useAction();
  const paused = link.status === 'paused';
  const refusal = planRefusal(toggle.error);
  return (
    <>
      <BusyButton
        className="button"
        busy={toggle.busy}
        busyLabel={paused ? 'Resuming…' : 'Pausing…'}
        onPress={() =>
          void toggle
            .run(() => unwrap(rest.PATCH('/v1/signing-links/{id}', { params: { path: { id: link.id } }, body: { status: paused ? 'active' : 'paused' } })))
            .then(onChanged)
            .catch(() => undefined)
        }
      >
        {paused ? 'Resume' : 'Pause'}
      </BusyButton>
      <ConfirmButton
        label="Delete"
        title={`Delete “${link.title}”?`}
        confirmLabel="Delete link"
        description={<p>Its URL stops working at once; visitors who open it are told the link no longer exists. The envelopes it created stay, with their signatures.</p>}
        error={<FormError error={remove.error} />}
        onConfirm={async () => {
          await remove.run(() => unwrap(rest.DELETE('/v1/signing-links/{id}', { params: { path: { id: link.id } } })));
          onChanged();
        }}
      />
      {refusal ? <UpgradeNotice refusal={refusal} /> : <FormError error={toggle.error} />}
    </>
  );
}
