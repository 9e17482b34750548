/** Shared by the fake's tests: the project's CRDs, raw HTTP requests, and a watch stream read line by line. */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ApiException, CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { afterEach } from 'vitest';
import { parse } from 'yaml';
import type { FakeKubeApi } from '../src/index.ts';
import { startFakeKubeApi } from '../src/index.ts';

const CRD_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../infra/k8s/crds');

export function projectCrds(): object[] {
  return readdirSync(CRD_DIR).filter((f) => f.startsWith('backups.strata.dev_') && f.endsWith('.yaml')).map((f) => parse(readFileSync(path.join(CRD_DIR, f), 'utf8')) as object);
}

export const GROUP = 'backups.strata.dev';
export const VERSION = 'v1alpha1';
export const NS = 'strata';
export const targetsPath = `/apis/${GROUP}/${VERSION}/namespaces/${NS}/backuptargets`;
/**
 * A fake with the project's CRDs per test, closed after it: call once at a file's top level, then `await setup()` in a
 * test for the fake and its clients (`target` names the BackupTarget collection for CustomObjectsApi).
 */
export function fakeForEachTest() {
  let fake: FakeKubeApi | undefined;
  afterEach(async () => {
    await fake?.close();
    fake = undefined;
  });
  return async () => {
    fake = await startFakeKubeApi({ crds: projectCrds() });
    const config = fake.kubeConfig();
    const target = { group: GROUP, version: VERSION, namespace: NS, plural: 'backuptargets' };
    return { fake, custom: config.makeApiClient(CustomObjectsApi), core: config.makeApiClient(CoreV1Api), target };
  };
}

/** A BackupTarget spec its CRD's schema accepts. */
export const targetSpec = (overrides: Record<string, unknown> = {}) => ({ engine: 'postgres', endpoint: { host: 'db.example' }, credentials: { secretRef: { name: 'db' } }, policy: 'daily', ...overrides });

/** JSON as the API server answers it, walked freely by the comparisons. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any;

export interface RawAnswer {
  status: number;
  body: Json;
  headers: Headers;
}

/** One request as a client sends it, with the fake's token unless `authorization` says otherwise. */
export async function raw(fake: FakeKubeApi, method: string, pathAndQuery: string, body?: unknown, headers: Record<string, string> = {}): Promise<RawAnswer> {
  const response = await fetch(`${fake.url}${pathAndQuery}`, {
    method,
    headers: { authorization: 'Bearer t', ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined, headers: response.headers };
}

/** The Status object of a client-node error (its body is the raw text for some APIs). */
export function statusOf(error: unknown): Json {
  if (!(error instanceof ApiException)) throw error;
  return typeof error.body === 'string' ? JSON.parse(error.body) : error.body;
}

export async function rejection(promise: Promise<unknown>): Promise<Json> {
  try {
    await promise;
  } catch (error) {
    return statusOf(error);
  }
  throw new Error('expected the API call to fail');
}

/** An open watch: events arrive in `events`; `next(n)` waits until n have arrived; `ended` resolves at the end. */
export async function openWatch(fake: FakeKubeApi, pathAndQuery: string) {
  const controller = new AbortController();
  const response = await fetch(`${fake.url}${pathAndQuery}`, { headers: { authorization: 'Bearer t' }, signal: controller.signal });
  const events: Array<{ type: string; object: Json }> = [];
  const waiters: Array<() => void> = [];
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  const ended = (async () => {
    let buffered = '';
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffered += value;
        const lines = buffered.split('\n');
        buffered = lines.pop()!;
        for (const line of lines.filter(Boolean)) events.push(JSON.parse(line));
        waiters.splice(0).forEach((wake) => wake());
      }
    } catch {
      // Aborted by the test.
    }
    waiters.splice(0).forEach((wake) => wake());
  })();
  let finished = false;
  void ended.then(() => (finished = true));
  return {
    status: response.status,
    headers: response.headers,
    events,
    ended,
    async next(count: number) {
      while (events.length < count && !finished) await new Promise<void>((resolve) => waiters.push(resolve));
      return events.slice(0, count);
    },
    close: () => controller.abort(),
  };
}
