import { Fragment, useCallback, useState, type ReactNode } from 'react';
import { Button } from 'react-aria-components';
import { Loading } from './Page.tsx';

/** Where one page of a keyset-paged table stands: its cursor (null for the newest), and how to ask for the next. */
export interface PageSlot {
  after: string | null;
  index: number;
  /** Only the last page offers the next one. */
  isLast: boolean;
  onMore: (cursor: string) => void;
}

/**
 * The pages of a table read a page at a time: the first, then one more each time the last one's "Show older" is
 * pressed. `children` renders one page (a `PagedRows`) for each.
 */
export function PagedBodies({ children }: { children: (slot: PageSlot) => ReactNode }) {
  const [cursors, setCursors] = useState<(string | null)[]>([null]);
  const onMore = useCallback((next: string) => setCursors((c) => [...c, next]), []);
  return cursors.map((after, index) => <Fragment key={after ?? 'first'}>{children({ after, index, isLast: index === cursors.length - 1, onMore })}</Fragment>);
}

/** One page of a GraphQL connection, as the API's lists answer it. */
export interface RowsPage<T> {
  nodes: readonly T[];
  hasMore: boolean;
  nextCursor?: string | null;
}

export interface PagedRowsProps<T> {
  slot: PageSlot;
  /** The page's query: its page once read, whether it is loading, what failed. */
  page: RowsPage<T> | undefined;
  fetching: boolean;
  error?: { message: string };
  /** The table's column count: messages span the whole row. */
  columns: number;
  /** What is loading, in words ("API keys"). */
  what: string;
  /** Shown when the list has nothing at all. */
  empty: ReactNode;
  /** The words of the button that reads the next page ("Show older keys"). */
  olderLabel: string;
  children: (node: T) => ReactNode;
}

/** One page of a table as its own `<tbody>`: loading, the error, the empty list's words, the rows, and "Show older". */
export function PagedRows<T extends { id: string }>({ slot, page, fetching, error, columns, what, empty, olderLabel, children }: PagedRowsProps<T>) {
  const message = (content: ReactNode) => (
    <tr>
      <td colSpan={columns}>{content}</td>
    </tr>
  );
  return (
    <tbody>
      {!page && fetching && message(<Loading what={what} />)}
      {error && message(<p role="alert" className="error-text">{error.message}</p>)}
      {page && page.nodes.length === 0 && slot.after === null && message(empty)}
      {page?.nodes.map((node) => <Fragment key={node.id}>{children(node)}</Fragment>)}
      {slot.isLast &&
        page?.hasMore &&
        page.nextCursor &&
        message(
          <Button className="button" onPress={() => slot.onMore(page.nextCursor as string)}>
            {olderLabel}
          </Button>,
        )}
    </tbody>
  );
}
