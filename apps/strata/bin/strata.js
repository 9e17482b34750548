#!/usr/bin/env node
// Launcher of the `strata` CLI. The CLI is TypeScript run by Node's type stripping, which needs
// Node >= 24: use the running Node when it is recent enough, else the repository's pinned Node
// (node_modules/.bin/node of the nearest enclosing node_modules), else fail with a clear message.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const main = path.join(here, '..', 'src', 'main.ts');
const major = Number(process.versions.node.split('.')[0]);

if (major >= 24) {
  await import(pathToFileURL(main).href);
} else {
  const node = findNode(here);
  if (!node) {
    process.stderr.write(`error: strata needs Node.js 24 or later (running ${process.version}); run "npm install" in the repository or put Node 24 on PATH\n`);
    process.exit(1);
  }
  const child = spawn(node, [main, ...process.argv.slice(2)], { stdio: 'inherit' });
  // The child gets Ctrl-C from the terminal itself; the launcher only waits for it.
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(sig, () => {});
  child.on('error', (err) => {
    process.stderr.write(`error: cannot start ${node}: ${err.message}\n`);
    process.exit(1);
  });
  child.on('exit', (code, signal) => {
    if (signal) {
      for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.removeAllListeners(sig);
      process.kill(process.pid, signal);
    } else {
      process.exit(code ?? 1);
    }
  });
}

function findNode(start) {
  const exe = process.platform === 'win32' ? 'node.exe' : 'node';
  for (let dir = start; ; dir = path.dirname(dir)) {
    for (const candidate of [path.join(dir, 'node_modules', '.bin', exe), path.join(dir, 'node_modules', 'node', 'bin', exe)]) {
      if (existsSync(candidate)) return candidate;
    }
    if (path.dirname(dir) === dir) return undefined;
  }
}
