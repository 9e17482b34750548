import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { Client, Provider, makeErrorResult, makeResult, type Exchange, type Operation, type OperationResult } from 'urql';
import { filter, map, pipe } from 'wonka';
import { FollowSandbox } from '../src/pages/restores/Follow.tsx';

/** What the API answers for each query, by operation name: data, GraphQL errors, or a network failure. */
type Answers = Record<string, { data?: unknown; errors?: Array<{ message: string; extensions?: Record<string, unknown> }>; network?: string }>;

/** A client that answers at once (so a server render sees the answer), as the gateway would have. */
function clientAnswering(answers: Answers): Client {
  const answer = (operation: Operation): OperationResult => {
    const name = operation.query.definitions.flatMap((d) => (d.kind === 'OperationDefinition' && d.name ? [d.name.value] : []))[0] ?? '';
    const given = answers[name];
    if (!given) throw new Error(`no answer for ${name}`);
    if (given.network) return makeErrorResult(operation, new Error(given.network));
    return makeResult(operation, { data: given.data ?? null, errors: given.errors });
  };
  const exchange: Exchange = () => (operations$) =>
    pipe(
      operations$,
      filter((operation) => operation.kind === 'query'),
      map(answer),
    );
  return new Client({ url: 'http://console.test/graphql', exchanges: [exchange] });
}

function render(answers: Answers): string {
  return renderToStaticMarkup(createElement(Provider, { value: clientAnswering(answers) }, createElement(FollowSandbox, { name: 'orders-sbx-1' })));
}

const sandbox = { name: 'orders-sbx-1', namespace: 'prod', phase: 'Restoring', message: '', restore: 'orders-sbx-1-restore' };
const restore = {
  namespace: 'prod',
  name: 'orders-sbx-1-restore',
  mode: 'sandbox',
  phase: 'Running',
  message: '',
  requestedBy: 'ana@example.com',
  sandbox: 'orders-sbx-1',
  downloadURL: '',
  downloadExpires: null,
  created: '2026-11-28T08:00:00Z',
  durationSeconds: 0,
  progress: { stage: 'base backup', bytes: 1000, totalBytes: 4000, updatedAt: '2026-11-28T08:00:05Z' },
  target: { namespace: 'prod', name: 'orders', engine: 'postgres' },
  backup: null,
  safetyBackup: '',
  source: null,
  destination: null,
  plan: null,
  checks: [],
};
const forbidden = { message: 'your role viewer may not read restores', extensions: { code: 'FORBIDDEN' } };

describe('following a sandbox being opened', () => {
  it('shows the restore read’s refusal in the API’s words with a button to read again, not “Loading” for ever', () => {
    const html = render({ RestoreSandboxFollow: { data: { strataSandbox: sandbox } }, RestoreFollow: { data: { strataRestore: null }, errors: [forbidden] } });
    expect(html).toContain('role="alert"');
    expect(html).toContain('Not allowed.');
    expect(html).toContain('your role viewer may not read restores');
    expect(html).toMatch(/<button[^>]*>Try again<\/button>/);
    expect(html).not.toContain('Loading');
  });

  it('shows a sandbox read that failed on the network as such, with a button to read again', () => {
    const html = render({ RestoreSandboxFollow: { network: 'connection refused' } });
    expect(html).toContain('Network error.');
    expect(html).toContain('connection refused');
    expect(html).toMatch(/<button[^>]*>Try again<\/button>/);
    expect(html).not.toContain('Loading');
  });

  it('says a sandbox the API does not know cannot be found, instead of loading it', () => {
    const html = render({ RestoreSandboxFollow: { data: { strataSandbox: null } } });
    expect(html).toContain('Sandbox orders-sbx-1 cannot be found yet');
    expect(html).not.toContain('Loading');
  });

  it('shows the progress once both reads answered, without an error', () => {
    const html = render({ RestoreSandboxFollow: { data: { strataSandbox: sandbox } }, RestoreFollow: { data: { strataRestore: restore } } });
    expect(html).toContain('sandbox orders-sbx-1: Restoring');
    expect(html).not.toContain('role="alert"');
    expect(html).not.toContain('Try again');
  });
});
