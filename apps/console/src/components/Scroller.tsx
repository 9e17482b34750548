import type { ReactNode } from 'react';

/** What scrolls sideways on a phone (a table), reachable and scrollable from the keyboard, named for screen readers. */
export function ScrollRegion({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className="table-wrap" role="region" aria-label={`${label} (scrolls sideways)`} tabIndex={0}>
      {children}
    </div>
  );
}

/** A table named `label` in a ScrollRegion. */
export function Scroller({ label, className, children }: { label: string; className?: string; children: ReactNode }) {
  return (
    <ScrollRegion label={label}>
      <table className={className ? `table ${className}` : 'table'} aria-label={label}>
        {children}
      </table>
    </ScrollRegion>
  );
}

/** A table's one row of words when it has nothing to list. */
export function Empty({ columns, children }: { columns: number; children: ReactNode }) {
  return (
    <tr>
      <td colSpan={columns}>{children}</td>
    </tr>
  );
}
