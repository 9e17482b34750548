/**
 * Builds a web app (typed documents from gateway/api-schema.graphql with graphql-codegen, then Vite) into its dist/,
 * unless dist was built from exactly these sources: the app's, this package's, the API schema and the lockfile (their
 * SHA-256 is kept in dist/.build-hash). `--force` builds anyway; `--out <dir>` builds into a private folder, always (a
 * bench's own stack serves it: others' builds rewrite the shared dist meanwhile).
 * Each app's scripts/build.ts calls it; scripts/bootstrap.sh runs those, so up.sh and the tests serve current apps.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const SHARED = path.resolve(import.meta.dirname, '..');

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && !path.join(entry.parentPath, entry.name).includes(`${path.sep}gql${path.sep}`))
    .map((entry) => path.join(entry.parentPath, entry.name))
    .sort();
}

function sourceHash(appDir: string): string {
  const inputs = [
    ...filesUnder(path.join(appDir, 'src')),
    ...['index.html', 'vite.config.ts', 'codegen.ts', 'package.json'].map((f) => path.join(appDir, f)),
    ...filesUnder(path.join(SHARED, 'src')),
    path.join(ROOT, 'gateway/api-schema.graphql'),
    path.join(ROOT, 'package-lock.json'),
  ];
  const hash = createHash('sha256');
  for (const file of inputs) hash.update(path.relative(ROOT, file)).update('\0').update(readFileSync(file)).update('\0');
  return hash.digest('hex');
}

export function buildWebApp(appDir: string, argv: readonly string[]): void {
  const name = path.relative(ROOT, appDir);
  const run = (command: string, args: string[]) => {
    const result = spawnSync(path.join(ROOT, 'node_modules/.bin', command), args, { cwd: appDir, stdio: 'inherit' });
    if (result.status !== 0) {
      console.error(`${name} build: ${command} ${args.join(' ')} failed (exit ${result.status ?? result.signal})`);
      process.exit(1);
    }
  };
  const outIndex = argv.indexOf('--out');
  if (outIndex >= 0) {
    const out = argv[outIndex + 1];
    if (!out) {
      console.error(`${name} build: --out needs a directory`);
      process.exit(2);
    }
    run('graphql-codegen', ['--config', 'codegen.ts', '--silent']);
    run('vite', ['build', '--logLevel', 'warn', '--outDir', path.resolve(out), '--emptyOutDir']);
    console.log(`${name} build: built ${out}`);
    return;
  }
  const hashFile = path.join(appDir, 'dist/.build-hash');
  const hash = sourceHash(appDir);
  if (!argv.includes('--force') && existsSync(hashFile) && readFileSync(hashFile, 'utf8') === hash) {
    console.log(`${name} build: dist is current`);
    return;
  }
  run('graphql-codegen', ['--config', 'codegen.ts', '--silent']);
  run('vite', ['build', '--logLevel', 'warn']);
  writeFileSync(hashFile, hash);
  console.log(`${name} build: built ${name}/dist`);
}
