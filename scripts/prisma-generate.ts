// Generates each data-owning service's Prisma client. The schema engine cannot be downloaded here and
// `generate` does not use it, so any existing file satisfies Prisma's binary check.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, existsSync, writeFileSync, mkdtempSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
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

/**
 * Prisma's client loads its query compiler from a module holding the WASM as a base64 string, and that string stays
 * in every process's heap for good (4.4 MiB: the module source and the exported string). The generated client reads
 * the binary written next to it instead.
 */
const WASM_LOADER = /getQueryCompilerWasmModule: async \(\) => \{\n\s*const \{ wasm \} = await import\("(@prisma\/client\/runtime\/query_compiler_[a-z]+_bg\.[a-z]+\.wasm-base64\.mjs)"\)\n\s*return await decodeBase64AsWasm\(wasm\)\n\s*\}/;
for (const service of services) {
  const output = path.join(root, 'services', service, 'src', 'generated', 'prisma', 'internal');
  const classFile = path.join(output, 'class.ts');
  const source = readFileSync(classFile, 'utf8');
  const match = WASM_LOADER.exec(source);
  if (!match) throw new Error(`${classFile}: Prisma's WASM loader changed shape; update scripts/prisma-generate.ts`);
  const { wasm } = (await import(pathToFileURL(path.join(root, 'node_modules', match[1]!)).href)) as { wasm: string };
  writeFileSync(path.join(output, 'query_compiler.wasm'), Buffer.from(wasm, 'base64'));
  writeFileSync(
    classFile,
    source.replace(
      WASM_LOADER,
      "getQueryCompilerWasmModule: async () => {\n    const { readFile } = await import('node:fs/promises')\n    return await WebAssembly.compile(await readFile(new URL('./query_compiler.wasm', import.meta.url)))\n  }",
    ),
  );
}
