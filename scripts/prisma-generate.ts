// Generates each data-owning service's Prisma client. The schema engine cannot be downloaded here and
// `generate` does not use it, so any existing file satisfies Prisma's binary check.
import { execFileSync } from 'node:child_process';
import { readdirSync, existsSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const only = process.argv.slice(2);
const services = readdirSync(path.join(root, 'prisma'), { withFileTypes: true })
  .filter((e) => e.isDirectory() && existsSync(path.join(root, 'prisma', e.name, 'schema')))
  .map((e) => e.name)
  .filter((name) => only.length === 0 || only.includes(name));

let engine = process.env.PRISMA_SCHEMA_ENGINE_BINARY;
if (!engine || !existsSync(engine)) {
  engine = path.join(mkdtempSync(path.join(tmpdir(), 'prisma-engine-')), 'schema-engine-placeholder');
  writeFileSync(engine, '');
}
const prismaCli = path.join(root, 'node_modules', 'prisma', 'build', 'index.js');
for (const service of services) {
  execFileSync(process.execPath, [prismaCli, 'generate', '--schema', path.join(root, 'prisma', service, 'schema')], {
    stdio: ['ignore', 'inherit', 'inherit'],
    env: { ...process.env, PRISMA_SCHEMA_ENGINE_BINARY: engine, PRISMA_HIDE_UPDATE_MESSAGE: '1' },
  });
}
