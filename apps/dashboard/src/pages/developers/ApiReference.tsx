import { Link } from 'react-aria-components';
import { useSession } from '../../app/session.tsx';
import './developers.css';
import { CopyButton, Page } from '@sigil/web-ui';

/** Where this deployment's API lives and how to call it; every address is this deployment's own (window.location). */
export default function ApiReference() {
  const { mode } = useSession();
  const origin = window.location.origin;
  const prefix = mode === 'test' ? 'sgl_test_' : 'sgl_live_';
  const curl = `curl -H "Authorization: Bearer $SIGIL_API_KEY" ${origin}/v1/templates`;
  return (
    <Page title="API reference" description="Everything the dashboard does, your servers can do through the same API.">
      <div className="reference">
        <section aria-labelledby="base" className="panel stack">
          <h2 id="base">Base URL</h2>
          <div className="secret-box">
            <code>{origin}</code>
            <CopyButton text={origin} label="Copy base URL" />
          </div>
          <p className="muted">REST operations live under /v1. Failures are RFC 9457 problem documents whose errors name the field they refer to.</p>
        </section>

        <section aria-labelledby="auth" className="panel stack">
          <h2 id="auth">Authenticate with an API key</h2>
          <p>
            Send the key in the <code>Authorization</code> header as a bearer token (or in <code>x-api-key</code>). A key starting with <code>sgl_test_</code>{' '}
            works in test mode only, one starting with <code>sgl_live_</code> in live mode; you are in {mode} mode, so your key starts with <code>{prefix}</code>.
          </p>
          <pre>
            <code>{curl}</code>
          </pre>
          <div className="row">
            <CopyButton text={curl} label="Copy example request" />
            <Link href="/developers/api-keys">Create an API key</Link>
          </div>
        </section>

        <section aria-labelledby="openapi" className="panel stack">
          <h2 id="openapi">OpenAPI document</h2>
          <p>
            The contract of every REST operation, its parameters, bodies and answers, in OpenAPI 3.1:{' '}
            <a href={`${origin}/v1/openapi.json`}>
              <code>{origin}/v1/openapi.json</code>
            </a>
            . Generate a typed client from it, or import it into your API tool.
          </p>
        </section>

        <section aria-labelledby="graphql" className="panel stack">
          <h2 id="graphql">GraphQL endpoint</h2>
          <div className="secret-box">
            <code>{origin}/graphql</code>
            <CopyButton text={`${origin}/graphql`} label="Copy GraphQL endpoint" />
          </div>
          <p className="muted">
            Reads only (envelopes, templates, webhook endpoints, your organization), with the same keys and permissions as REST; POST a query as JSON. Writes
            go through REST.
          </p>
        </section>

        <section aria-labelledby="signing" className="panel stack">
          <h2 id="signing">Webhook signatures</h2>
          <p>
            Every delivery follows <a href="https://www.standardwebhooks.com/">Standard Webhooks</a>: its <code>webhook-signature</code> header holds{' '}
            <code>v1,</code> and the base64 HMAC-SHA256 of <code>webhook-id.webhook-timestamp.body</code> made with the endpoint's signing secret (two
            signatures for 24 hours after a rotation), so any Standard Webhooks library verifies it.
          </p>
          <Link href="/developers/webhooks">Manage webhook endpoints</Link>
        </section>

        <section aria-labelledby="docs" className="panel stack">
          <h2 id="docs">Documentation</h2>
          <ul>
            <li>
              <a href={`${origin}/v1/openapi.json`}>The API contract (OpenAPI)</a>: each operation's summary, description and the permission it needs.
            </li>
            <li>
              <a href="https://www.standardwebhooks.com/">Standard Webhooks specification</a>: the signing scheme and its libraries.
            </li>
            <li>
              <a href="https://www.rfc-editor.org/rfc/rfc9457">RFC 9457, Problem Details for HTTP APIs</a>: the shape of every error.
            </li>
            <li>
              <a href={`${origin}/.well-known/sigil/keys.json`}>Evidence keys</a>: the public keys that verify sealed documents and audit trails.
            </li>
          </ul>
        </section>
      </div>
    </Page>
  );
}
