/**
 * The embedded S3 server (s3rver) of test/bench/strata-sandbox.ts, in a process of its own so that serving the
 * backup's objects does not share an event loop with the mover, which runs in the benchmark's process:
 *
 *   node_modules/.bin/node test/bench/strata-sandbox-s3.ts <state dir>
 *
 * Prints one JSON line (endpoint, region, access key, secret key) once it listens; stops on SIGTERM or SIGINT.
 */
import { startS3 } from '@sigil/local-stack';

export interface S3ChildInfo {
  endpoint: string;
  region: string;
  accessKey: string;
  secretKey: string;
}

const stateDir = process.argv[2];
if (!stateDir) {
  console.error('usage: node test/bench/strata-sandbox-s3.ts <state dir>');
  process.exit(2);
}
const s3 = await startS3({ stateDir, log: () => {} });
const info: S3ChildInfo = { endpoint: s3.endpoint, region: s3.region, accessKey: s3.accessKey, secretKey: s3.secretKey };
process.stdout.write(`${JSON.stringify(info)}\n`);
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    void s3.stop().finally(() => process.exit(0));
  });
}
// The parent going away (killed, crashed) closes our stdin: stop with it.
process.stdin.resume();
process.stdin.once('end', () => void s3.stop().finally(() => process.exit(0)));
