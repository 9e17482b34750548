import type { S3FileStoreOptions } from './file-store.ts';

/** The tests' S3 (the test setup's embedded server, or the one named in the environment), in `bucket`. */
export function testFileStoreOptions(bucket: string): S3FileStoreOptions {
  return {
    endpoint: process.env.S3_ENDPOINT ?? 'http://127.0.0.1:9000',
    region: process.env.S3_REGION ?? 'us-east-1',
    bucket,
    pathStyle: true,
    accessKeyId: process.env.S3_ACCESS_KEY ?? 'S3RVER',
    secretAccessKey: process.env.S3_SECRET_KEY ?? 'S3RVER',
  };
}
