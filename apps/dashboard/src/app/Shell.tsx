import type { ReactNode } from 'react';
import { Button, Switch } from 'react-aria-components';
import { NavLink, Outlet, useNavigate } from 'react-router';
import { useSession, type Permission } from './session.tsx';

interface NavItem {
  to: string;
  label: string;
  /** Shown only to those holding it (the page needs it for everything it shows). */
  permission?: Permission;
}

/** The navigation: what an organization works on, then its developers' and administrators' pages. */
const NAV: { heading: string; items: NavItem[] }[] = [
  {
    heading: 'Work',
    items: [
      { to: '/', label: 'Home' },
      { to: '/envelopes', label: 'Envelopes' },
      { to: '/templates', label: 'Templates' },
      { to: '/signing-links', label: 'Signing links' },
    ],
  },
  {
    heading: 'Developers',
    items: [
      { to: '/developers/api-keys', label: 'API keys' },
      { to: '/developers/webhooks', label: 'Webhooks' },
      { to: '/developers/api', label: 'API reference' },
    ],
  },
  {
    heading: 'Organization',
    items: [
      { to: '/members', label: 'Members' },
      { to: '/settings/billing', label: 'Billing', permission: 'billing:manage' },
      { to: '/settings/sso', label: 'Single sign-on', permission: 'sso:manage' },
      { to: '/settings/scim', label: 'SCIM provisioning', permission: 'sso:manage' },
      { to: '/settings/branding', label: 'E-mail branding', permission: 'org:manage' },
    ],
  },
];

/** Every signed-in page: the organization, the mode and the user on top, the navigation beside, the page in main. */
export function Shell() {
  const { session, mode, setMode, signOut, can } = useSession();
  const navigate = useNavigate();
  if (!session) return null;
  const test = mode === 'test';
  return (
    <div className={test ? 'shell shell-test' : 'shell'}>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="top">
        {test && (
          <div className="test-banner" role="note">
            Test mode: you are seeing and creating test data. Nothing is sent for real and nothing is billed.
          </div>
        )}
        <div className="topbar">
          <span className="brand">
            Sigil
          </span>
          <span className="org" title="Organization">
            {session.organization.name}
          </span>
          <Switch className="mode-switch" isSelected={test} onChange={(on) => setMode(on ? 'test' : 'live')}>
            <div className="indicator" aria-hidden="true" />
            Test mode
          </Switch>
          <span className="user">
            {session.user.name} <span className="muted">({session.role})</span>
          </span>
          <Button
            className="button button-quiet"
            onPress={async () => {
              await signOut();
              navigate('/sign-in');
            }}
          >
            Sign out
          </Button>
        </div>
      </header>
      <div className="layout">
        <nav aria-label="Main" className="sidebar">
          {NAV.map((group) => ({ ...group, items: group.items.filter((item) => !item.permission || can(item.permission)) })).map((group) => (
            <section key={group.heading}>
              <h2>{group.heading}</h2>
              <ul>
                {group.items.map((item) => (
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

/** Pages for signed-out people (sign in, sign up, invitations): one centred card. */
export function Card({ title, children }: { title: string; children: ReactNode }) {
  return (
    <main className="card-page">
      <div className="card">
        <p className="brand">Sigil</p>
        <h1>{title}</h1>
        {children}
      </div>
    </main>
  );
}
