/**
 * Builds the console into apps/console/dist unless it is current (packages/web-ui/scripts/build-app.ts says how).
 *   node apps/console/scripts/build.ts [--force]
 *   node apps/console/scripts/build.ts --out <dir>   a private build into <dir> (served with CONSOLE_DIST_DIR)
 */
import path from 'node:path';
import { buildWebApp } from '@sigil/web-ui/build';

buildWebApp(path.resolve(import.meta.dirname, '..'), process.argv.slice(2));
