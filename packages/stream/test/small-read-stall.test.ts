import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, expect, it } from 'vitest';
import { createS3Client, readSmallObject } from '../src/s3.ts';

/**
 * A store on loopback that announces a body's length and sends only part of it on a connection it keeps open (what the
 * embedded store did when a claim was rewritten while it was read): the read gives up after its idle time instead of
 * waiting forever.
 */
let server: http.Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

async function shortBodyStore(sent: string, announced: number) {
  server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-length': String(announced), 'content-type': 'application/json' });
    res.write(sent); // and nothing more: the connection stays open
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return createS3Client({ endpoint: `http://127.0.0.1:${port}`, region: 'us-east-1', pathStyle: true, accessKeyId: 'key', secretAccessKey: 'secret' });
}

it('gives up on a small object whose body stops short of its length, naming what it read', async () => {
  const client = await shortBodyStore('{"attempt":', 120);
  const started = Date.now();
  await expect(readSmallObject(client, 'bucket', 'lease/first.json', 64 * 1024, 200)).rejects.toThrow('the store sent nothing for 200 ms before the object\'s end (11 bytes read)');
  expect(Date.now() - started).toBeLessThan(10_000);
});

it('reads a body that arrives whole however long the object is', async () => {
  const body = JSON.stringify({ attempt: 'first', state: 'held' });
  const client = await shortBodyStore(body, Buffer.byteLength(body));
  expect((await readSmallObject(client, 'bucket', 'lease/first.json', 64 * 1024, 200))?.toString()).toBe(body);
});
