import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { SERVICE_NAMES } from '@sigil/proto/routes';
import { until, type TestStack } from '../e2e/stack.ts';

const REPO_ROOT = path.resolve(import.meta.dirname, '../..');

export interface SecondGateway {
  url: string;
  stop(): Promise<void>;
}

/**
 * A second gateway process in front of the stack's services, configured as a deployment behind a TLS-terminating load
 * balancer says it is (`TRUSTED_PROXIES=1`): its callers play that proxy by writing `X-Forwarded-Proto`. Same keys,
 * services and broker as the stack's own gateway (whose `TRUSTED_PROXIES` is 0); it logs to `logs/<logName>.log`, so
 * the log checks read it too.
 */
export async function startGatewayBehindTls(stack: TestStack, logName = 'gateway-behind-tls'): Promise<SecondGateway> {
  const keys = JSON.parse(await readFile(path.join(stack.stateDir, 'internal-jwt-key.json'), 'utf8')) as { privateJwk: unknown };
  const devIssuerKey = (await readFile(path.join(stack.stateDir, 'strata-dev-issuer.json'), 'utf8')).trim();
  const routed = Object.fromEntries(Object.entries(stack.serviceUrls).filter(([name]) => name !== 'gateway' && (SERVICE_NAMES as readonly string[]).includes(name)));
  const listenFile = path.join(stack.stateDir, `${logName}.url`);
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    HOST: '127.0.0.1',
    PORT: '0',
    LISTEN_URL_FILE: listenFile,
    SERVICE_URLS: JSON.stringify(routed),
    INTERNAL_JWT_PRIVATE_KEY: JSON.stringify(keys.privateJwk),
    NATS_URL: stack.infra.nats.url,
    LOG_LEVEL: 'info',
    TRUSTED_PROXIES: '1',
    STRATA_DEV_ISSUER: 'true',
    STRATA_DEV_ISSUER_KEY: devIssuerKey,
    ...Object.fromEntries((['DASHBOARD_DIST_DIR', 'CONSOLE_DIST_DIR', 'NODE_COMPILE_CACHE'] as const).flatMap((name) => (process.env[name] ? [[name, process.env[name]]] : []))),
  };
  const log = createWriteStream(path.join(stack.stateDir, 'logs', `${logName}.log`), { flags: 'a' });
  const child: ChildProcess = spawn(process.execPath, [path.join(REPO_ROOT, 'gateway/src/main.ts')], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.pipe(log, { end: false });
  child.stderr?.pipe(log, { end: false });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.once('close', () => log.end());
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  try {
    const url = await until(async () => (existsSync(listenFile) ? (await readFile(listenFile, 'utf8')).trim() : '') || (child.exitCode !== null ? 'exited' : ''), (value) => value !== '', 30_000);
    if (url === 'exited') throw new Error(`the second gateway exited (${child.exitCode}); see logs/${logName}.log`);
    await until(async () => (await fetch(`${url}/readyz`).catch(() => undefined))?.status, (status) => status === 200, 30_000);
    return { url, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
