/** A date in a narrow table cell (the day only; the exact time on hover and for assistive technology's `dateTime`). */
export function ShortDate({ at, empty = 'Never' }: { at: string | null | undefined; empty?: string }) {
  if (!at) return <span className="muted">{empty}</span>;
  const date = new Date(at);
  return (
    <time dateTime={at} title={date.toLocaleString()} className="nowrap">
      {date.toLocaleDateString(undefined, { dateStyle: 'medium' })}
    </time>
  );
}
