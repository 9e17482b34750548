import { createS3Client, ensureBucket } from './s3.ts';

/** Immutable objects under their key in one bucket: template files, envelope documents, attachments. */
export interface FileStore {
  put(key: string, bytes: Buffer, contentType: string): Promise<void>;
  get(key: string): Promise<Buffer>;
}

export interface S3FileStoreOptions {
  endpoint: string;
  region: string;
  bucket: string;
  pathStyle: boolean;
  accessKeyId: string;
  secretAccessKey: string;
}

/** The store a service's configuration names (`s3ConfigFields` of @sigil/kit/config). */
export function fileStoreOptions(config: { S3_ENDPOINT: string; S3_REGION: string; S3_BUCKET: string; S3_PATH_STYLE: boolean; S3_ACCESS_KEY: string; S3_SECRET_KEY: string }): S3FileStoreOptions {
  return {
    endpoint: config.S3_ENDPOINT,
    region: config.S3_REGION,
    bucket: config.S3_BUCKET,
    pathStyle: config.S3_PATH_STYLE,
    accessKeyId: config.S3_ACCESS_KEY,
    secretAccessKey: config.S3_SECRET_KEY,
  };
}

/** An S3 bucket (created when missing). */
export async function createS3FileStore(options: S3FileStoreOptions): Promise<FileStore> {
  const client = createS3Client(options);
  await ensureBucket(client, options.bucket, options.region);
  return {
    async put(key, bytes, contentType) {
      await client.putObject(options.bucket, key, bytes, bytes.length, { 'Content-Type': contentType });
    },
    async get(key) {
      const stream = await client.getObject(options.bucket, key);
      const chunks: Buffer[] = [];
      for await (const chunk of stream) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks);
    },
  };
}
