// The console builds the bench serves from the run's own folder (CONSOLE_DIST_DIR; the gateway reads index.html again
// when a build replaces it): the app as its sources are now, and, for attribution and proposals, Vite straight from
// an app folder (unminified for the profiler, or a modified copy of apps/console).
import { spawnSync } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '../..');
export const CONSOLE_DIR = path.join(ROOT, 'apps/console');

/** The console as its sources are now (codegen, then Vite), into `outDir`: others' builds rewrite apps/console/dist. */
export function buildConsole(outDir: string): void {
  const built = spawnSync(process.execPath, [path.join(CONSOLE_DIR, 'scripts/build.ts'), '--out', outDir], { cwd: ROOT, stdio: 'inherit' });
  if (built.status !== 0) throw new Error('the console did not build; the bench measures the current app only');
}

/**
 * Vite alone from `appDir` (apps/console, or a copy of it whose node_modules links to the repository's) into
 * `outDir`: its generated documents (src/gql) are the ones the first build wrote.
 */
export function viteBuild(appDir: string, outDir: string, options: { minify: boolean }): void {
  const args = ['build', '--logLevel', 'warn', '--outDir', outDir, '--emptyOutDir', ...(options.minify ? [] : ['--minify', 'false'])];
  const built = spawnSync(path.join(ROOT, 'node_modules/.bin/vite'), args, { cwd: appDir, stdio: 'inherit' });
  if (built.status !== 0) throw new Error(`${appDir} did not build`);
}
