import type { ReactNode } from 'react';

/** A table that scrolls sideways on a phone, reachable (and scrollable) from the keyboard. */
export function Scroller({ label, className, children }: { label: string; className?: string; children: ReactNode }) {
  return (
    <div className="table-wrap" role="region" aria-label={`${label} (scrolls sideways)`} tabIndex={0}>
      <table className={className ? `table ${className}` : 'table'} aria-label={label}>
        {children}
      </table>
    </div>
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
