import { afterEach, describe, expect, it } from 'vitest';
import { ensureInfra } from '../src/index.ts';
import type { Infra } from '../src/index.ts';
import { probeNats } from '../src/nats.ts';
import { probePostgres } from '../src/postgres.ts';
import { removeDir, tempStateDir } from './helpers.ts';

// The servers the test run provisioned (test/setup/global-setup.ts): the machine's own when named and
// answering, otherwise ones it started. Either way they answer, so they count as named here.
const POSTGRES_URL = process.env.POSTGRES_URL as string;
const NATS_URL = process.env.NATS_URL as string;

describe('ensureInfra with services named in the environment', () => {
  let infra: Infra | undefined;
  let stateDir: string | undefined;
  afterEach(async () => {
    await infra?.stop();
    infra = undefined;
    removeDir(stateDir);
    stateDir = undefined;
  });

  it('uses POSTGRES_URL and NATS_URL when they answer', { timeout: 30_000 }, async () => {
    expect(POSTGRES_URL && NATS_URL, 'the global test setup provides POSTGRES_URL and NATS_URL').toBeTruthy();
    stateDir = tempStateDir();
    infra = await ensureInfra({ stateDir, env: { POSTGRES_URL, NATS_URL } });
    expect(infra.postgres).toEqual({ adminUrl: POSTGRES_URL, source: 'env' });
    expect(infra.nats).toEqual({ url: NATS_URL, source: 'env' });
    // Not named: started in-process.
    expect(infra.s3.source).toBe('started');
    expect(infra.smtp.source).toBe('started');
    await infra.stop();
    // stop() leaves env-provided services alone.
    expect(await probePostgres(POSTGRES_URL)).toBeUndefined();
    expect(await probeNats(NATS_URL)).toBeUndefined();
  });

  it('falls back to its own servers when the named ones are dead', { timeout: 60_000 }, async () => {
    stateDir = tempStateDir();
    const lines: string[] = [];
    infra = await ensureInfra({
      stateDir,
      env: {
        POSTGRES_URL: 'postgres://postgres@127.0.0.1:1/postgres',
        NATS_URL: 'nats://127.0.0.1:1',
        S3_ENDPOINT: 'http://127.0.0.1:1',
        S3_ACCESS_KEY: 'x',
        S3_SECRET_KEY: 'y',
        SMTP_URL: 'smtp://127.0.0.1:1',
        SMTP_INBOX_URL: 'http://127.0.0.1:1',
      },
      log: (l) => lines.push(l),
    });
    expect(infra.postgres.source).toBe('started');
    expect(infra.nats.source).toBe('started');
    expect(infra.s3.source).toBe('started');
    expect(infra.smtp.source).toBe('started');
    expect(infra.nats.url).not.toBe('nats://127.0.0.1:1');
    expect(await probeNats(infra.nats.url)).toBeUndefined();
    expect(await probePostgres(infra.postgres.adminUrl)).toBeUndefined();
    expect(lines.some((l) => l.startsWith('nats: NATS_URL nats://127.0.0.1:1 does not answer'))).toBe(true);
  });

  it('falls back when NATS answers without JetStream', { timeout: 30_000 }, async () => {
    // A plain TCP server speaking the first line of the NATS protocol is enough to be "up but wrong".
    const net = await import('node:net');
    const fake = net.createServer((socket) => {
      socket.write('INFO {"server_id":"fake","version":"2.10.0","proto":1,"max_payload":1048576,"jetstream":false}\r\n');
      socket.on('data', (data) => {
        if (data.toString().includes('PING')) socket.write('PONG\r\n');
      });
      socket.on('error', () => {});
    });
    await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve));
    const address = fake.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    try {
      const problem = await probeNats(`nats://127.0.0.1:${port}`);
      expect(problem).toMatch(/JetStream/);
    } finally {
      fake.close();
    }
  });
});
