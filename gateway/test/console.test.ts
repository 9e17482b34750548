import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import express from 'express';
import request from 'supertest';
import { consoleRouter } from '../src/console.ts';

const INDEX_HTML = '<!doctype html>\n<html>\n  <head>\n    <title>Strata console</title>\n    <script type="module" src="/console/assets/index-abc123.js"></script>\n  </head>\n  <body><div id="root"></div></body>\n</html>\n';

/** The console is served as the dashboard is (the same web-app router; gateway/test/dashboard.test.ts goes deeper). */
describe('the built console under /console', () => {
  let dist: string;
  const app = () => express().use('/console', consoleRouter({ distDir: dist }));

  beforeAll(async () => {
    dist = await mkdtemp(path.join(tmpdir(), 'strata-console-dist-'));
    await mkdir(path.join(dist, 'assets'));
    await writeFile(path.join(dist, 'index.html'), INDEX_HTML);
    await writeFile(path.join(dist, 'assets', 'index-abc123.js'), 'console.log("console");\n');
  });

  afterAll(() => rm(dist, { recursive: true, force: true }));

  it.each(['/console', '/console/', '/console/targets/default/postgres', '/console/restore?target=default%2Fpostgres'])('answers index.html for %s with the strict policy and a style nonce', async (url) => {
    const res = await request(app()).get(url).expect(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.headers['cache-control']).toBe('no-store');
    const nonce = /<meta property="csp-nonce" nonce="([^"]+)" \/>/.exec(res.text)?.[1];
    expect(nonce).toBeTruthy();
    expect(res.headers['content-security-policy']).toContain(`style-src 'self' 'nonce-${nonce}'`);
    expect(res.headers['content-security-policy']).toContain("script-src 'self';");
    expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  });

  it('serves hashed assets for a year, and a missing one as 404, never the page', async () => {
    const asset = await request(app()).get('/console/assets/index-abc123.js').expect(200);
    expect(asset.headers['cache-control']).toContain('immutable');
    const missing = await request(app()).get('/console/assets/index-old999.js').expect(404);
    expect(missing.text).toBe('No such file in this build of the console.\n');
  });

  it('says how to build it when it is not built', async () => {
    const empty = await mkdtemp(path.join(tmpdir(), 'strata-console-empty-'));
    const res = await request(express().use('/console', consoleRouter({ distDir: empty }))).get('/console/targets').expect(503);
    expect(res.text).toBe('The console is not built: run `npm run build -w @strata/console` (scripts/bootstrap.sh does).\n');
    await rm(empty, { recursive: true, force: true });
  });
});
