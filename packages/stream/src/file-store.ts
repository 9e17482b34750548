import { createHash } from 'node:crypto';
import { AwsClient } from 'aws4fetch';
import { parseS3Endpoint } from './endpoint.ts';

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

/**
 * An S3 bucket (created when missing). Whole small objects only, so a SigV4 signer over `fetch` serves: the Sigil
 * services that keep files need none of minio's streaming and multipart machinery (about 10 MiB of heap each).
 */
export async function createS3FileStore(options: S3FileStoreOptions): Promise<FileStore> {
  const { url } = parseS3Endpoint(options.endpoint);
  const region = options.region || 'us-east-1';
  const aws = new AwsClient({ accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey, service: 's3', region, retries: 3 });
  const bucketUrl = options.pathStyle ? `${url.origin}/${encodeURIComponent(options.bucket)}` : `${url.protocol}//${options.bucket}.${url.host}`;
  const objectUrl = (key: string) => `${bucketUrl}/${key.split('/').map(encodeURIComponent).join('/')}`;
  const request = async (what: string, target: string, init: RequestInit & { body?: Buffer }): Promise<Response> => {
    const payloadHash = createHash('sha256').update(init.body ?? '').digest('hex');
    try {
      return await aws.fetch(target, { ...init, headers: { ...(init.headers as Record<string, string>), 'x-amz-content-sha256': payloadHash } });
    } catch (error) {
      const cause = (error as { cause?: { message?: string } }).cause?.message ?? (error as Error).message;
      throw new Error(`S3 ${what}: ${options.endpoint} cannot be reached (${cause})`, { cause: error });
    }
  };
  const send = async (what: string, target: string, init: RequestInit & { body?: Buffer }): Promise<Response> => {
    const res = await request(what, target, init);
    if (res.ok) return res;
    throw await storeError(what, res);
  };

  const ensureBucket = async (): Promise<void> => {
    const head = await request(`opening bucket ${options.bucket}`, bucketUrl, { method: 'HEAD' });
    if (head.ok) return;
    if (head.status !== 404) throw new Error(`S3 opening bucket ${options.bucket}: ${head.status} ${head.statusText} (check the endpoint, region and credentials)`);
    const body = region === 'us-east-1' ? undefined : Buffer.from(`<CreateBucketConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><LocationConstraint>${region}</LocationConstraint></CreateBucketConfiguration>`);
    try {
      await send(`creating bucket ${options.bucket}`, bucketUrl, { method: 'PUT', ...(body ? { body } : {}) });
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code !== 'BucketAlreadyOwnedByYou' && code !== 'BucketAlreadyExists') throw error;
    }
  };
  await ensureBucket();

  return {
    async put(key, bytes, contentType) {
      await send(`writing ${key}`, objectUrl(key), { method: 'PUT', body: bytes, headers: { 'content-type': contentType } });
    },
    async get(key) {
      const res = await send(`reading ${key}`, objectUrl(key), { method: 'GET' });
      return Buffer.from(await res.arrayBuffer());
    },
  };
}

/** S3's error document (`<Error><Code>…</Code><Message>…</Message></Error>`) as an Error carrying S3's code. */
async function storeError(what: string, res: Response): Promise<Error & { code?: string; status: number }> {
  const text = await res.text().catch(() => '');
  const field = (name: string) => new RegExp(`<${name}>([^<]*)</${name}>`).exec(text)?.[1];
  const code = field('Code');
  const error = new Error(`S3 ${what}: ${res.status} ${code ?? res.statusText}${field('Message') ? `: ${field('Message')}` : ''}`) as Error & { code?: string; status: number };
  if (code) error.code = code;
  error.status = res.status;
  return error;
}
