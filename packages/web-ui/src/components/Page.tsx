import { createContext, useContext, useEffect, type ReactNode } from 'react';

/** The product named after each page's title in the browser's tab ("Envelopes · Sigil"); each app provides its own. */
export const AppName = createContext('Sigil');

/** A page's title (the document's too) and its main actions. */
export function Page({ title, actions, children, description }: { title: string; actions?: ReactNode; description?: ReactNode; children: ReactNode }) {
  const appName = useContext(AppName);
  useEffect(() => {
    document.title = `${title} · ${appName}`;
  }, [title, appName]);
  return (
    <>
      <header className="page-header">
        <div>
          <h1>{title}</h1>
          {description && <p className="muted">{description}</p>}
        </div>
        {actions && <div className="page-actions">{actions}</div>}
      </header>
      {children}
    </>
  );
}

/** A status shown as a coloured badge with its words (colour is never the only signal). */
export function StatusBadge({ status }: { status: string }) {
  return <span className={`badge badge-${status.toLowerCase().replace(/[^a-z_]/g, '')}`}>{status.replace(/_/g, ' ')}</span>;
}

/** Dates as people read them, with the exact time on hover. */
export function When({ at }: { at: string | null | undefined }) {
  if (!at) return <span className="muted">—</span>;
  const date = new Date(at);
  return (
    <time dateTime={at} title={date.toISOString()}>
      {date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' })}
    </time>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p className="muted" role="status">
      Loading {what}…
    </p>
  );
}
