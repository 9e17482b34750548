// The console API's answers and errors as the CLI prints them, and the CLI's events and enumerations.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli, VERSION } from '../src/cli.ts';
import { everyOf } from '../src/cli-types.ts';
import { eventOf } from '../src/events.ts';
import { fakeFetch, jsonAnswer } from '@strata/client/testing';

const SERVER = 'https://strata.example.com';

describe('as the CLI prints it', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'strata-client-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function run(args: string[], answer: (request: Request) => Response, { anonymous = false } = {}) {
    const chunks = { out: '', err: '' };
    const sink = (key: 'out' | 'err'): Writable =>
      new Writable({
        write(chunk: Buffer, _enc, cb) {
          chunks[key] += chunk.toString();
          cb();
        },
      });
    const fake = fakeFetch(answer);
    const env = { HOME: dir, STRATA_CONFIG: path.join(dir, 'config.json'), STRATA_SERVER: SERVER, STRATA_TOKEN: anonymous ? undefined : 'tok' };
    const code = await runCli(args, { stdout: sink('out'), stderr: sink('err'), env, fetch: fake.fetch });
    return { code, stdout: chunks.out, stderr: chunks.err, requests: fake.requests };
  }

  it('an error answer prints its message and exits 1', async () => {
    const r = await run(['backup', 'b9'], () => jsonAnswer(404, { error: 'Backup b9 does not exist.' }));
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe('error: Backup b9 does not exist.\n');
    expect(r.requests[0]?.url).toBe(`${SERVER}/api/v1/backups/b9`);
    expect(r.requests[0]?.headers.get('user-agent')).toBe(`strata-cli/${VERSION}`);
  });

  it('a proxy error page prints the status only', async () => {
    const r = await run(['targets'], () => new Response('<html>502</html>', { status: 502, statusText: 'Bad Gateway' }));
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('error: 502 Bad Gateway\n');
  });

  it('a 401 without a token hints to log in', async () => {
    const r = await run(['whoami'], () => jsonAnswer(401, { error: 'missing access token' }), { anonymous: true });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`error: missing access token\nhint: not logged in; run \`strata login --server ${SERVER}\`\n`);
  });

  it('the event stream reconnects after it ends and gives up after five connections without an answer', async () => {
    let calls = 0;
    const r = await run(['events'], () => {
      if (++calls === 1) return new Response('retry: 10\nid: 7\nevent: target\ndata: {"kind":"target","name":"a"}\n\n', { status: 200, headers: { 'content-type': 'text/event-stream' } });
      throw new TypeError('fetch failed', { cause: Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }) });
    });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('target a\n');
    expect(r.stderr).toBe(`error: cannot reach ${SERVER}: ECONNRESET\n`);
    expect(r.requests).toHaveLength(6);
    expect(r.requests[1]?.headers.get('last-event-id')).toBe('7');
    expect(r.requests[1]?.headers.get('accept')).toBe('text/event-stream');
  });

  it('login against a server without the dev issuer says so', async () => {
    const r = await run(['login', '--email', 'ops@example.com'], () => jsonAnswer(404, { error: 'No operation exists at this path.' }));
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`error: ${SERVER} has no dev token issuer (only the local stack has one); use --token with a token from the access proxy\n`);
    expect(r.requests[0]?.url).toBe(`${SERVER}/api/dev/token`);
    expect(r.requests[0]?.headers.has('cf-access-token')).toBe(false);
  });

  it('login fails when the dev issuer answers without a token', async () => {
    const r = await run(['login', '--email', 'ops@example.com'], () => jsonAnswer(200, { expiresAt: '2030-01-01T00:00:00Z' }));
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('error: the dev issuer answered without a token\n');
  });
});

describe('events and enumerations', () => {
  it('eventOf keeps the typed fields and falls back to the frame name for an unknown kind', () => {
    expect(eventOf({ event: 'backup', id: '1', raw: '', data: { kind: 'mystery', name: 'b', phase: 3, bytes: '2048', version: 7 } })).toEqual({
      kind: 'backup',
      namespace: undefined,
      name: 'b',
      phase: undefined,
      stage: undefined,
      message: undefined,
      bytes: 2048,
      version: 7,
    });
    expect(eventOf({ event: 'message', id: undefined, raw: 'x', data: 'x' }).kind).toBeUndefined();
  });

  it('everyOf returns the list and rejects one that misses a value of the union', () => {
    expect(everyOf<'a' | 'b'>()(['b', 'a'])).toEqual(['b', 'a']);
    // @ts-expect-error -- 'b' is missing
    expect(everyOf<'a' | 'b'>()(['a'])).toEqual(['a']);
  });
});
