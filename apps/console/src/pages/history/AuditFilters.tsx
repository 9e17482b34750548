import { useEffect, useState } from 'react';
import { Input, Label, SearchField, Text } from 'react-aria-components';
import { SelectField } from '@sigil/web-ui';

export interface AuditFilterValues {
  action?: string;
  user?: string;
  limit: number;
}

const LIMITS = [50, 100, 250, 500, 1000] as const;
const DEFAULT_LIMIT = 100;

/** The filters live in the URL (a filtered log can be shared and survives a reload). */
export function auditFiltersFrom(params: URLSearchParams): AuditFilterValues {
  const limit = Number(params.get('limit'));
  return {
    action: params.get('action') || undefined,
    user: params.get('user') || undefined,
    limit: (LIMITS as readonly number[]).includes(limit) ? limit : DEFAULT_LIMIT,
  };
}

export function auditSearchOf(filters: AuditFilterValues): string {
  const params = new URLSearchParams();
  if (filters.action) params.set('action', filters.action);
  if (filters.user) params.set('user', filters.user);
  if (filters.limit !== DEFAULT_LIMIT) params.set('limit', String(filters.limit));
  const search = params.toString();
  return search ? `?${search}` : '';
}

/** Action and user (exact, as the API matches them; applied as the person stops typing) and how many events to show. */
export function AuditFilters({ filters, onChange }: { filters: AuditFilterValues; onChange: (next: AuditFilterValues) => void }) {
  return (
    <div className="filters hist-filters" role="search" aria-label="Filter the audit log">
      <TextFilter label="Action" description="Exactly, e.g. backupNow" value={filters.action} onChange={(action) => onChange({ ...filters, action })} />
      <TextFilter label="User" description="E-mail or id, exactly" value={filters.user} onChange={(user) => onChange({ ...filters, user })} />
      <SelectField<string>
        label="Show"
        options={LIMITS.map((limit) => ({ id: String(limit), name: `Newest ${limit}` }))}
        value={String(filters.limit)}
        onChange={(limit) => onChange({ ...filters, limit: Number(limit) })}
      />
    </div>
  );
}

function TextFilter({ label, description, value, onChange }: { label: string; description: string; value: string | undefined; onChange: (value: string | undefined) => void }) {
  const [text, setText] = useState(value ?? '');
  useEffect(() => setText(value ?? ''), [value]);
  useEffect(() => {
    if (text === (value ?? '')) return;
    const timer = setTimeout(() => onChange(text.trim() || undefined), 400);
    return () => clearTimeout(timer);
  }, [text]);
  return (
    <SearchField className="field" value={text} onChange={setText}>
      <Label>{label}</Label>
      <Input />
      <Text slot="description">{description}</Text>
    </SearchField>
  );
}
