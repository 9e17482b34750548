import path from 'node:path';

/** The built dashboard (`npm run build -w @sigil/dashboard`, run by scripts/bootstrap.sh): index.html and assets/. */
export const DASHBOARD_DIST_DIR = path.resolve(import.meta.dirname, '../dist');
