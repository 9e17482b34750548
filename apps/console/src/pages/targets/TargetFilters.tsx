import { useEffect, useState } from 'react';
import { Input, Label, SearchField } from 'react-aria-components';
import { SelectField } from '@sigil/web-ui';
import type { TargetHealth } from '../../gql/graphql.ts';

export interface TargetFilterValues {
  org?: string;
  project?: string;
  env?: string;
  health?: TargetHealth;
  q?: string;
}

const HEALTHS: readonly TargetHealth[] = ['ok', 'never', 'failing', 'stale', 'suspended', 'misconfigured'];
const HEALTH_WORDS: Record<TargetHealth, string> = {
  ok: 'backed up on schedule',
  never: 'no successful backup yet',
  failing: 'the last run failed',
  stale: 'no success for two schedule intervals',
  suspended: 'backups paused',
  misconfigured: 'policy or store missing',
};

/** The filters live in the URL (a filtered list can be shared and survives a reload). */
export function filtersFrom(params: URLSearchParams): TargetFilterValues {
  const health = params.get('health');
  const text = (name: string) => params.get(name) || undefined;
  return { org: text('org'), project: text('project'), env: text('env'), q: text('q'), health: HEALTHS.includes(health as TargetHealth) ? (health as TargetHealth) : undefined };
}

export function searchOf(filters: TargetFilterValues): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(filters)) if (value) params.set(name, value);
  const search = params.toString();
  return search ? `?${search}` : '';
}

/** Search, health and the org/project/env labels; text filters apply as the person stops typing. */
export function TargetFilters({ filters, onChange }: { filters: TargetFilterValues; onChange: (next: TargetFilterValues) => void }) {
  return (
    <div className="filters" role="search" aria-label="Filter targets">
      <TextFilter label="Search" value={filters.q} onChange={(q) => onChange({ ...filters, q })} />
      <SelectField<TargetHealth | 'any'>
        label="Health"
        options={[{ id: 'any', name: 'Any health' }, ...HEALTHS.map((h) => ({ id: h, name: h, detail: HEALTH_WORDS[h] }))]}
        value={filters.health ?? 'any'}
        onChange={(health) => onChange({ ...filters, health: health === 'any' ? undefined : health })}
      />
      <TextFilter label="Organization" value={filters.org} onChange={(org) => onChange({ ...filters, org })} />
      <TextFilter label="Project" value={filters.project} onChange={(project) => onChange({ ...filters, project })} />
      <TextFilter label="Environment" value={filters.env} onChange={(env) => onChange({ ...filters, env })} />
    </div>
  );
}

function TextFilter({ label, value, onChange }: { label: string; value: string | undefined; onChange: (value: string | undefined) => void }) {
  const [text, setText] = useState(value ?? '');
  useEffect(() => setText(value ?? ''), [value]);
  useEffect(() => {
    if (text === (value ?? '')) return;
    const timer = setTimeout(() => onChange(text.trim() || undefined), 300);
    return () => clearTimeout(timer);
  }, [text]);
  return (
    <SearchField className="field" value={text} onChange={setText}>
      <Label>{label}</Label>
      <Input />
    </SearchField>
  );
}
