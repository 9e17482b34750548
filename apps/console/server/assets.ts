import path from 'node:path';

/** The built console (`npm run build -w @strata/console`, run by scripts/bootstrap.sh): index.html and assets/. */
export const CONSOLE_DIST_DIR = path.resolve(import.meta.dirname, '../dist');
