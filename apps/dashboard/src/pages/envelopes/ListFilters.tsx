import { useEffect, useRef, useState } from 'react';
import { Button, Checkbox, Input, Label, SearchField } from 'react-aria-components';
import { useQuery } from 'urql';
import { graphql } from '../../gql/index.ts';
import { SelectField, type Option } from './controls.tsx';
import { hasFilters, type EnvelopeFilters } from './listParams.ts';
import { ENVELOPE_STATUS_LABELS, ENVELOPE_STATUSES, SEAL_STATUS_LABELS, SEAL_STATUSES, type EnvelopeStatus, type SealStatus } from './status.ts';

const TemplateChoices = graphql(`
  query EnvelopeFilterTemplates {
    templates(first: 100) {
      nodes {
        id
        name
      }
    }
  }
`);

export const WAITING_DAYS = 3;
const ANY = 'any';
const STATUS_OPTIONS: Option[] = [{ id: ANY, label: 'Any status' }, ...ENVELOPE_STATUSES.map((s) => ({ id: s, label: ENVELOPE_STATUS_LABELS[s] }))];
const SEAL_OPTIONS: Option[] = [{ id: ANY, label: 'Any seal' }, ...SEAL_STATUSES.map((s) => ({ id: s, label: SEAL_STATUS_LABELS[s] }))];
const orUndefined = <T extends string>(id: string): T | undefined => (id === ANY ? undefined : (id as T));

/** The search as typed reaches the URL after a pause (or at once with Enter), so typing is not one request per key. */
function useTypedSearch(q: string | undefined, apply: (q: string | undefined) => void) {
  const [text, setText] = useState(q ?? '');
  const timer = useRef<ReturnType<typeof setTimeout>>(undefined);
  useEffect(() => setText(q ?? ''), [q]);
  useEffect(() => () => clearTimeout(timer.current), []);
  const change = (value: string) => {
    setText(value);
    clearTimeout(timer.current);
    timer.current = setTimeout(() => apply(value.trim() || undefined), 300);
  };
  const submit = (value: string) => {
    clearTimeout(timer.current);
    apply(value.trim() || undefined);
  };
  return { text, change, submit };
}

/** Every filter of the API's envelope list, and search; each change goes to the URL. */
export function ListFilters({ filters, onChange }: { filters: EnvelopeFilters; onChange: (next: EnvelopeFilters) => void }) {
  const [{ data }] = useQuery({ query: TemplateChoices });
  const templateOptions: Option[] = [{ id: ANY, label: 'Any template' }, ...(data?.templates.nodes ?? []).map((t) => ({ id: t.id, label: t.name }))];
  if (filters.template && !templateOptions.some((o) => o.id === filters.template)) templateOptions.push({ id: filters.template, label: filters.template });
  const search = useTypedSearch(filters.q, (q) => onChange({ ...filters, q }));

  return (
    <div role="search" className="env-filters" aria-label="Filter envelopes">
      <SearchField className="field env-search" value={search.text} onChange={search.change} onSubmit={search.submit} onClear={() => search.submit('')}>
        <Label>Search</Label>
        <Input placeholder="Name, e-mail or external ID" />
      </SearchField>
      <SelectField label="Status" options={STATUS_OPTIONS} value={filters.status ?? ANY} onChange={(id) => onChange({ ...filters, status: orUndefined<EnvelopeStatus>(id) })} />
      <SelectField label="Seal" options={SEAL_OPTIONS} value={filters.seal ?? ANY} onChange={(id) => onChange({ ...filters, seal: orUndefined<SealStatus>(id) })} />
      <SelectField label="Template" options={templateOptions} value={filters.template ?? ANY} onChange={(id) => onChange({ ...filters, template: orUndefined(id) })} />
      <Checkbox className="env-checkbox" isSelected={filters.waitingDays !== undefined} onChange={(on) => onChange({ ...filters, waitingDays: on ? WAITING_DAYS : undefined })}>
        <div className="box" aria-hidden="true" />
        Waiting on someone for more than {filters.waitingDays ?? WAITING_DAYS} days
      </Checkbox>
      {hasFilters(filters) && (
        <Button className="button button-quiet" onPress={() => onChange({})}>
          Clear filters
        </Button>
      )}
    </div>
  );
}
