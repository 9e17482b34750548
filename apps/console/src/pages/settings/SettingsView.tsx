import type { ReactNode } from 'react';
import { StatusBadge } from '@sigil/web-ui';
import { Empty, Scroller } from '../../components/Scroller.tsx';

export interface StoreRow {
  name: string;
  endpoint: string;
  region: string;
  bucket: string;
  prefix: string;
  phase: string;
  message: string;
  readOnly: boolean;
}

export interface PolicyRow {
  namespace: string;
  name: string;
  store: string;
  schedule: string;
  verify: string;
  retention: string;
  pitr: boolean;
}

export interface SettingsData {
  stores: readonly StoreRow[];
  policies: readonly PolicyRow[];
  version: string;
  catalog: { targets: number; backups: number; version: number };
}

/** The read-only view of `GET /settings`: the catalog's counts, the stores and the policies. */
export function SettingsView({ settings }: { settings: SettingsData }) {
  return (
    <>
      <section aria-labelledby="catalog-heading">
        <h2 id="catalog-heading">Catalog</h2>
        <dl className="cards set-stats">
          <Stat label="Targets" value={settings.catalog.targets} />
          <Stat label="Backups" value={settings.catalog.backups} />
          <Stat label="Catalog version" value={settings.catalog.version} />
          <Stat label="Service version" value={settings.version || '—'} />
        </dl>
      </section>
      <section aria-labelledby="stores-heading">
        <h2 id="stores-heading">Stores</h2>
        <StoresTable stores={settings.stores} />
      </section>
      <section aria-labelledby="policies-heading">
        <h2 id="policies-heading">Policies</h2>
        <PoliciesTable policies={settings.policies} />
      </section>
    </>
  );
}

function Stat({ label, value }: { label: string; value: ReactNode }) {
  return (
    <div className="stat">
      <dt className="muted small">{label}</dt>
      <dd className="value">{value}</dd>
    </div>
  );
}

function StoresTable({ stores }: { stores: readonly StoreRow[] }) {
  return (
    <Scroller label="Stores">
      <thead>
        <tr>
          <th scope="col">Store</th>
          <th scope="col">Endpoint and region</th>
          <th scope="col">Bucket and prefix</th>
          <th scope="col">Phase</th>
          <th scope="col">Access</th>
        </tr>
      </thead>
      <tbody>
        {stores.length === 0 && <Empty columns={5}>No store yet. A BackupStore resource names the bucket backups go to.</Empty>}
        {stores.map((store) => (
          <tr key={store.name}>
            <th scope="row">{store.name}</th>
            <td>
              <code className="set-wrap">{store.endpoint}</code>
              <div className="muted small">{store.region}</div>
            </td>
            <td>
              <code>{store.bucket}</code>
              <div className="muted small">{store.prefix ? <code>{store.prefix}</code> : 'no prefix'}</div>
            </td>
            <td>
              <StatusBadge status={store.phase || 'unknown'} />
              {store.message && <div className="small">{store.message}</div>}
            </td>
            <td>{store.readOnly ? <strong>read-only</strong> : 'read-write'}</td>
          </tr>
        ))}
      </tbody>
    </Scroller>
  );
}

function PoliciesTable({ policies }: { policies: readonly PolicyRow[] }) {
  return (
    <Scroller label="Policies">
      <thead>
        <tr>
          <th scope="col">Policy</th>
          <th scope="col">Store</th>
          <th scope="col">Full backups</th>
          <th scope="col">Retention</th>
          <th scope="col">Verification</th>
          <th scope="col">Point in time</th>
        </tr>
      </thead>
      <tbody>
        {policies.length === 0 && <Empty columns={6}>No policy yet. A BackupPolicy resource sets the schedule and retention of its targets.</Empty>}
        {policies.map((policy) => (
          <tr key={`${policy.namespace}/${policy.name}`}>
            <th scope="row">
              {policy.namespace}/{policy.name}
            </th>
            <td>{policy.store}</td>
            <td>
              <code className="set-nowrap">{policy.schedule}</code>
            </td>
            <td>{policy.retention || <span className="muted">not set</span>}</td>
            <td>{policy.verify ? <code className="set-nowrap">{policy.verify}</code> : <span className="muted">off</span>}</td>
            <td>{policy.pitr ? 'on' : <span className="muted">off</span>}</td>
          </tr>
        ))}
      </tbody>
    </Scroller>
  );
}
