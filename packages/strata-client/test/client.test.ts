// Unit tests of the typed console API client: requests built from the document, answers and errors.
import { describe, expect, it } from 'vitest';
import { ApiError, createStrataClient, expectData } from '../src/index.ts';
import { fakeFetch, jsonAnswer } from '../src/testing.ts';

const SERVER = 'https://strata.example.com';

function clientWith(answer: (request: Request) => Response | Promise<Response>, { anonymous = false } = {}) {
  const fake = fakeFetch(answer);
  return { client: createStrataClient({ server: SERVER, token: anonymous ? undefined : 'tok', fetch: fake.fetch, userAgent: 'strata-cli/test' }), requests: fake.requests };
}

describe('requests built from the document', () => {
  it('fills path parameters encoded, drops absent and empty query values, sends the token and the user agent', async () => {
    const { client, requests } = clientWith(() => jsonAnswer(200, { target: 'default/orders', backups: [] }));
    await expectData(client.api.GET('/targets/{ns}/{name}/backups', { params: { path: { ns: 'default', name: 'a b/c' }, query: { limit: 5 } } }));
    await expectData(client.api.GET('/targets', { params: { query: { env: '', org: undefined, q: 'ord ers' } } }));
    const [first, second] = requests;
    expect(first?.method).toBe('GET');
    expect(first?.url).toBe(`${SERVER}/api/v1/targets/default/a%20b%2Fc/backups?limit=5`);
    expect(second?.url).toBe(`${SERVER}/api/v1/targets?q=ord%20ers`);
    expect(first?.headers.get('cf-access-token')).toBe('tok');
    expect(first?.headers.get('user-agent')).toBe('strata-cli/test');
    expect(first?.headers.get('accept')).toBe('application/json');
  });

  it('sends no token header without a token, and JSON bodies as application/json', async () => {
    const { client, requests } = clientWith(() => jsonAnswer(200, { message: 'target prod/orders suspended' }), { anonymous: true });
    const action = await expectData(client.api.POST('/targets/{ns}/{name}/suspend', { params: { path: { ns: 'prod', name: 'orders' } }, body: { reason: 'maintenance' } }));
    expect(action).toEqual({ message: 'target prod/orders suspended' });
    const request = requests[0];
    expect(request?.headers.has('cf-access-token')).toBe(false);
    expect(request?.headers.get('content-type')).toBe('application/json');
    expect(await request?.text()).toBe('{"reason":"maintenance"}');
  });
});

describe('answers that are not the documented success', () => {
  const cases: Array<[string, () => Response, number, string]> = [
    ['an { error } answer', () => jsonAnswer(404, { error: 'Backup b9 does not exist.' }, 'Not Found'), 404, 'Backup b9 does not exist.'],
    ['a short plain-text answer', () => new Response('upstream timed out\n', { status: 504, statusText: 'Gateway Timeout' }), 504, '504 Gateway Timeout: upstream timed out'],
    ['an HTML page', () => new Response('<html><body>Bad gateway</body></html>', { status: 502, statusText: 'Bad Gateway' }), 502, '502 Bad Gateway'],
    ['a problem document', () => jsonAnswer(409, { type: 'about:blank', title: 'Conflict', status: 409, detail: 'Restore r1 is running.' }), 409, 'Restore r1 is running.'],
    ['a { message } answer', () => jsonAnswer(409, { message: 'target prod/orders is suspended' }), 409, 'target prod/orders is suspended'],
    ['JSON without a member stating the error', () => jsonAnswer(500, { code: 'x' }), 500, '500: {"code":"x"}'],
    ['an empty error answer', () => new Response(null, { status: 503, statusText: 'Service Unavailable' }), 503, '503 Service Unavailable'],
    ['a success without a body', () => new Response(null, { status: 200 }), 200, 'the server answered 200 without a body'],
  ];
  for (const [what, answer, status, message] of cases) {
    it(`${what} becomes ApiError ${status}: ${message}`, async () => {
      const { client } = clientWith(answer);
      const failure = await expectData(client.api.GET('/whoami')).catch((e: unknown) => e);
      expect(failure).toBeInstanceOf(ApiError);
      expect(failure).toMatchObject({ status, message });
    });
  }

  it('a success that is not JSON is an ApiError, not a crash in a renderer', async () => {
    const { client } = clientWith(() => new Response('<html>console</html>', { status: 200, headers: { 'content-type': 'text/html' } }));
    const failure = await expectData(client.api.GET('/whoami')).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(ApiError);
    expect(failure).toMatchObject({ status: 0, message: expect.stringMatching(/^the server's answer is not valid JSON/) });
  });

  it('a request that gets no answer is ApiError 0 naming the server and the cause', async () => {
    const { client } = clientWith(() => {
      throw new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) });
    });
    const failure = await expectData(client.api.GET('/settings')).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(ApiError);
    expect(failure).toMatchObject({ status: 0, message: `cannot reach ${SERVER}: ECONNREFUSED` });
  });
});
