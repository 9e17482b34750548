import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { generateInternalKeyPair } from '@sigil/kit/auth';
import { testNatsUrl } from '@sigil/kit/testing';
import { closedPortUrl } from './helpers.ts';

const MAIN = path.resolve(import.meta.dirname, '../src/main.ts');

function start(env: Record<string, string>) {
  const child = spawn(process.execPath, [MAIN], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += String(chunk)));
  child.stderr.on('data', (chunk) => (stderr += String(chunk)));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, output: () => ({ stdout, stderr }) };
}

describe('main', () => {
  it('refuses to boot with an invalid configuration and names every problem', async () => {
    const run = start({ PORT: 'eighty', SERVICE_URLS: '{"templates":"not a url","nope":"http://x"}', INTERNAL_JWT_PRIVATE_KEY: '{}' });
    expect(await run.exited).toBe(1);
    const { stderr } = run.output();
    expect(stderr).toContain('Invalid configuration');
    for (const name of ['PORT', 'SERVICE_URLS', 'INTERNAL_JWT_PRIVATE_KEY', 'NATS_URL']) expect(stderr).toContain(name);
    expect(stderr).toContain('unknown service "nope"');
  });

  it('boots, serves health and the contract, and shuts down gracefully on SIGTERM', async () => {
    const { privateJwk } = await generateInternalKeyPair();
    const run = start({
      PORT: '0',
      SERVICE_URLS: JSON.stringify({ templates: await closedPortUrl() }),
      INTERNAL_JWT_PRIVATE_KEY: JSON.stringify(privateJwk),
      NATS_URL: testNatsUrl(),
      LOG_LEVEL: 'info',
    });
    try {
      let url: string | undefined;
      const deadline = Date.now() + 20_000;
      while (!url && Date.now() < deadline) {
        url = /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(run.output().stdout)?.[1];
        if (!url) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(url, run.output().stderr).toBeDefined();
      expect((await fetch(`${url}/healthz`)).status).toBe(200);
      expect((await fetch(`${url}/readyz`)).status).toBe(503); // templates does not answer
      const doc = await fetch(`${url}/v1/openapi.json`);
      expect(doc.status).toBe(200);
      expect(((await doc.json()) as { openapi: string }).openapi).toMatch(/^3\.1/);
      const graph = await fetch(`${url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"query":"{ __typename }"}' });
      expect(graph.status).toBe(401); // no credentials, no graph
      expect(await graph.json()).toMatchObject({ errors: [{ extensions: { code: 'UNAUTHENTICATED' } }] });
    } finally {
      run.child.kill('SIGTERM');
    }
    expect(await run.exited).toBe(0);
    expect(run.output().stdout).toContain('stopped');
  });
});
