import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import path from 'node:path';
import S3rver from 's3rver';
import { errorMessage, LOOPBACK, pickPort } from './net.ts';
import { installS3rverDesShim } from './s3rver-des.ts';
import { installS3rverStoreFixes } from './s3rver-store.ts';

/** s3rver's fixed credentials; it accepts only these. */
export const LOCAL_S3_ACCESS_KEY = 'S3RVER';
export const LOCAL_S3_SECRET_KEY = 'S3RVER';
export const LOCAL_S3_REGION = 'us-east-1';

export interface S3Handle {
  endpoint: string;
  region: string;
  accessKey: string;
  secretKey: string;
  port: number;
  stop(): Promise<void>;
}

/**
 * Undefined when an HTTP request to the endpoint gets any response (even 403)
 * within timeoutMs. node:http rather than fetch, which refuses some ports.
 */
export async function probeS3(endpoint: string, timeoutMs = 2000): Promise<string | undefined> {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return `not a URL: ${endpoint}`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `not an http(s) URL: ${endpoint}`;
  const request = url.protocol === 'https:' ? https.request : http.request;
  return await new Promise<string | undefined>((resolve) => {
    const req = request(url, { method: 'GET', timeout: timeoutMs }, (res) => {
      res.resume();
      resolve(undefined);
      req.destroy();
    });
    req.once('timeout', () => {
      req.destroy();
      resolve(`no answer within ${timeoutMs} ms`);
    });
    req.once('error', (error) => resolve(errorMessage(error)));
    req.end();
  });
}

/** Run the embedded S3 server (s3rver) in this process, storing objects under <stateDir>/s3. */
export async function startS3(options: { stateDir: string; log: (line: string) => void }): Promise<S3Handle> {
  installS3rverDesShim();
  installS3rverStoreFixes();
  const directory = path.join(options.stateDir, 's3');
  const portFile = path.join(options.stateDir, 's3.port');
  fs.mkdirSync(directory, { recursive: true });
  let remembered: number | undefined;
  try {
    remembered = Number(fs.readFileSync(portFile, 'utf8').trim()) || undefined;
  } catch {
    remembered = undefined;
  }
  for (let attempt = 1; ; attempt++) {
    const port = await pickPort(remembered);
    remembered = undefined;
    const server = new S3rver({
      address: LOOPBACK,
      port,
      directory,
      silent: true,
      resetOnClose: false,
      vhostBuckets: false,
    });
    try {
      const address = await server.run();
      // Idle keep-alive sockets outlive the clients' (Node's agents drop theirs after 5 s, the server's default too):
      // with both at 5 s, a busy process closed a socket just as a client sent its next request on it ("aborted").
      if (server.httpServer) {
        server.httpServer.keepAliveTimeout = 65_000;
        server.httpServer.headersTimeout = 66_000;
      }
      const endpoint = `http://${LOOPBACK}:${address.port}`;
      fs.writeFileSync(portFile, `${address.port}\n`);
      options.log(`s3: started embedded S3 (s3rver) on ${endpoint} (data ${directory})`);
      let stopped: Promise<void> | undefined;
      return {
        endpoint,
        region: LOCAL_S3_REGION,
        accessKey: LOCAL_S3_ACCESS_KEY,
        secretKey: LOCAL_S3_SECRET_KEY,
        port: address.port,
        stop: () => {
          stopped ??= (async () => {
            const closing = server.close();
            server.httpServer?.closeAllConnections();
            await closing.catch(() => {});
          })();
          return stopped;
        },
      };
    } catch (error) {
      if (attempt < 3 && (error as NodeJS.ErrnoException).code === 'EADDRINUSE') continue;
      throw new Error(`s3: could not start the embedded S3 server: ${errorMessage(error)}`, { cause: error });
    }
  }
}
