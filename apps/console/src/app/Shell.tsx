import { useRef, type ReactNode } from 'react';
import { Button } from 'react-aria-components';
import { NavLink, Outlet, useLocation, useNavigate } from 'react-router';
import type { Role } from './roles.ts';
import { useSession } from './session.tsx';
import { useOverflowEdges } from './use-overflow-edges.ts';

interface NavItem {
  to: string;
  label: string;
  /** Shown only to callers whose role reaches it. */
  role?: Role;
}

/** The navigation: what is protected and restored, then what happened, then how it is set up. */
const NAV: { heading: string; items: NavItem[] }[] = [
  {
    heading: 'Databases',
    items: [
      { to: '/', label: 'Targets' },
      { to: '/restores', label: 'Restores' },
      { to: '/sandboxes', label: 'Sandboxes' },
    ],
  },
  {
    heading: 'History',
    items: [
      { to: '/activity', label: 'Activity' },
      { to: '/audit', label: 'Audit log', role: 'operator' },
    ],
  },
  { heading: 'Setup', items: [{ to: '/settings', label: 'Settings' }] },
];

/** Every signed-in page: the product and the caller with their role on top, the navigation beside, the page in main. */
export function Shell() {
  const { principal, can, devSignIn, signOut } = useSession();
  const navigate = useNavigate();
  const nav = useRef<HTMLElement>(null);
  // On a phone the navigation is one row that scrolls sideways: its cut-off edge fades, and the current page shows.
  useOverflowEdges(nav, "a[aria-current='page']", `${useLocation().pathname} ${principal?.role ?? ''}`);
  if (!principal) return null;
  return (
    <div className="shell">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="top">
        <div className="topbar">
          <span className="brand">Strata</span>
          <span className="user">
            {principal.email || principal.id} <span className="role-tag">{principal.role}</span>
          </span>
          {devSignIn && (
            <Button
              className="button button-quiet"
              onPress={async () => {
                await signOut();
                navigate('/sign-in');
              }}
            >
              Sign out
            </Button>
          )}
        </div>
      </header>
      <div className="layout">
        <nav aria-label="Main" className="sidebar" ref={nav}>
          {NAV.map((group) => (
            <section key={group.heading}>
              <h2>{group.heading}</h2>
              <ul>
                {group.items
                  .filter((item) => !item.role || can(item.role))
                  .map((item) => (
                    <li key={item.to}>
                      <NavLink to={item.to} end={item.to === '/'}>
                        {item.label}
                      </NavLink>
                    </li>
                  ))}
              </ul>
            </section>
          ))}
        </nav>
        <main id="main" tabIndex={-1}>
          <Outlet />
        </main>
      </div>
    </div>
  );
}

/** Pages before signing in: one centred card. */
export function Card({ title, children }: { title: string; children: ReactNode }) {
  return (
    <main className="card-page">
      <div className="card">
        <p className="brand">Strata</p>
        <h1>{title}</h1>
        {children}
      </div>
    </main>
  );
}
