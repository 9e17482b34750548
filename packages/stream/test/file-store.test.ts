import { randomBytes } from 'node:crypto';
import { createServer, type AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createS3FileStore } from '../src/file-store.ts';
import { parseS3Endpoint } from '../src/endpoint.ts';
import { createS3Client } from '../src/s3.ts';
import { testFileStoreOptions } from '../src/testing.ts';

const bucket = () => `file-store-${randomBytes(4).toString('hex')}`;

describe('S3 file store', () => {
  it('creates its bucket when missing and reads back what it wrote, byte for byte', async () => {
    const options = testFileStoreOptions(bucket());
    const store = await createS3FileStore(options);
    const bytes = randomBytes(300_000);
    await store.put('templates/org 1/ver_a/file (1).pdf', bytes, 'application/pdf');
    expect((await store.get('templates/org 1/ver_a/file (1).pdf')).equals(bytes)).toBe(true);
    // The object is there for any S3 client, with its content type.
    const stat = await createS3Client(options).statObject(options.bucket, 'templates/org 1/ver_a/file (1).pdf');
    expect(stat.size).toBe(bytes.length);
    expect(stat.metaData['content-type']).toBe('application/pdf');
  });

  it('opens a bucket that already exists without touching its objects', async () => {
    const options = testFileStoreOptions(bucket());
    await (await createS3FileStore(options)).put('a', Buffer.from('kept'), 'text/plain');
    const again = await createS3FileStore(options);
    expect((await again.get('a')).toString()).toBe('kept');
  });

  it("reports a missing object with S3's code and status", async () => {
    const store = await createS3FileStore(testFileStoreOptions(bucket()));
    await expect(store.get('nothing/here')).rejects.toMatchObject({ code: 'NoSuchKey', status: 404, message: expect.stringContaining('reading nothing/here') });
  });

  it('refuses at start-up a store that cannot be reached, naming it', async () => {
    const port = await closedPort();
    const options = { ...testFileStoreOptions(bucket()), endpoint: `http://127.0.0.1:${port}` };
    await expect(createS3FileStore(options)).rejects.toThrow(new RegExp(`S3 opening bucket file-store-\\w+: http://127\\.0\\.0\\.1:${port} cannot be reached \\(.*ECONNREFUSED`));
  });

  it('refuses an endpoint that is not a plain http(s) origin', () => {
    expect(() => parseS3Endpoint('ftp://store')).toThrow(/use http:\/\/ or https:\/\//);
    expect(() => parseS3Endpoint('http://store/bucket')).toThrow(/no path allowed/);
    expect(() => parseS3Endpoint('not a url')).toThrow(/not a URL/);
    expect(parseS3Endpoint('https://[::1]:9000')).toMatchObject({ hostname: '::1', port: 9000, useSSL: true });
  });
});

/** A loopback port nothing listens on any more. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
