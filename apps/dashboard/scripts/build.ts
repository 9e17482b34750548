/**
 * Builds the dashboard (typed documents from gateway/api-schema.graphql, then Vite) into apps/dashboard/dist, unless
 * dist was built from exactly these sources (their SHA-256 is kept in dist/.build-hash). scripts/bootstrap.sh runs it,
 * so `scripts/up.sh` and the tests always serve the current app.
 *   node apps/dashboard/scripts/build.ts [--force]
 *   node apps/dashboard/scripts/build.ts --out <dir>   a private build into <dir> (always built; for a bench's own stack,
 *                                                      which serves it with DASHBOARD_DIST_DIR)
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const APP = path.resolve(import.meta.dirname, '..');
const ROOT = path.resolve(APP, '../..');
const HASH_FILE = path.join(APP, 'dist/.build-hash');

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && !path.join(entry.parentPath, entry.name).includes(`${path.sep}gql${path.sep}`))
    .map((entry) => path.join(entry.parentPath, entry.name))
    .sort();
}

function sourceHash(): string {
  const inputs = [
    ...filesUnder(path.join(APP, 'src')),
    ...['index.html', 'vite.config.ts', 'codegen.ts', 'package.json'].map((f) => path.join(APP, f)),
    path.join(ROOT, 'gateway/api-schema.graphql'),
    path.join(ROOT, 'package-lock.json'),
  ];
  const hash = createHash('sha256');
  for (const file of inputs) hash.update(path.relative(ROOT, file)).update('\0').update(readFileSync(file)).update('\0');
  return hash.digest('hex');
}

function run(command: string, args: string[]): void {
  const result = spawnSync(path.join(ROOT, 'node_modules/.bin', command), args, { cwd: APP, stdio: 'inherit' });
  if (result.status !== 0) {
    console.error(`dashboard build: ${command} ${args.join(' ')} failed (exit ${result.status ?? result.signal})`);
    process.exit(1);
  }
}

const outIndex = process.argv.indexOf('--out');
const privateOut = outIndex > 0 ? process.argv[outIndex + 1] : undefined;
if (outIndex > 0 && !privateOut) {
  console.error('dashboard build: --out needs a directory');
  process.exit(2);
}
if (privateOut) {
  run('graphql-codegen', ['--config', 'codegen.ts', '--silent']);
  run('vite', ['build', '--logLevel', 'warn', '--outDir', path.resolve(privateOut), '--emptyOutDir']);
  console.log(`dashboard build: built ${privateOut}`);
} else {
  const hash = sourceHash();
  if (!process.argv.includes('--force') && existsSync(HASH_FILE) && readFileSync(HASH_FILE, 'utf8') === hash) {
    console.log('dashboard build: dist is current');
  } else {
    run('graphql-codegen', ['--config', 'codegen.ts', '--silent']);
    run('vite', ['build', '--logLevel', 'warn']);
    writeFileSync(HASH_FILE, hash);
    console.log('dashboard build: built apps/dashboard/dist');
  }
}
