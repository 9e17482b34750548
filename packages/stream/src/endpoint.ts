/** Where an S3-compatible store answers, read from its endpoint URL: one rule for every client of the store. */
export interface S3Endpoint {
  url: URL;
  useSSL: boolean;
  /** The host without IPv6 brackets. */
  hostname: string;
  port: number;
}

/** Parses a store's endpoint (http or https, optional port, no path: the bucket is configured separately). */
export function parseS3Endpoint(endpoint: string): S3Endpoint {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw new Error(`invalid S3 endpoint ${JSON.stringify(endpoint)}: not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`invalid S3 endpoint ${JSON.stringify(endpoint)}: use http:// or https://`);
  if (url.pathname !== '/' && url.pathname !== '') throw new Error(`invalid S3 endpoint ${JSON.stringify(endpoint)}: no path allowed (the bucket is configured separately)`);
  const useSSL = url.protocol === 'https:';
  return { url, useSSL, hostname: url.hostname.replace(/^\[(.*)\]$/, '$1'), port: url.port ? Number(url.port) : useSSL ? 443 : 80 };
}
