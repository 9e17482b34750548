// `npm start` on a fresh clone: before any install it must not fail on the machine's older Node; it installs first,
// saying so, and only then runs the stack on the project's own Node. Run here in a copy of the start scripts, with a
// stand-in npm that records the install (no network) and a stand-in Node that records what it was asked to run.
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const repo = path.resolve(import.meta.dirname, '../..');

describe('npm start on a fresh clone', () => {
  it('is the start script, which installs first (saying so) and then runs the stack on Node 24', () => {
    const pkg = JSON.parse(readFileSync(path.join(repo, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(pkg.scripts.start).toBe('bash scripts/up.sh');

    const clone = mkdtempSync(path.join(tmpdir(), 'fresh-clone-'));
    mkdirSync(path.join(clone, 'scripts'));
    for (const file of ['package.json', 'package-lock.json', 'scripts/up.sh', 'scripts/bootstrap.sh']) copyFileSync(path.join(repo, file), path.join(clone, file));
    const bin = mkdtempSync(path.join(tmpdir(), 'fresh-bin-'));
    // The stand-in npm: `npm ci` leaves what a real install leaves behind that the scripts look at.
    writeFileSync(
      path.join(bin, 'npm'),
      `#!/usr/bin/env bash
echo "npm $*" >> "${clone}/calls.log"
mkdir -p node_modules/.bin
touch node_modules/.package-lock.json
printf '#!/usr/bin/env bash\\necho "node24 $*" >> "${clone}/calls.log"\\n[ "$1" = --version ] && echo v24.0.0\\nexit 0\\n' > node_modules/.bin/node
chmod +x node_modules/.bin/node
`,
    );
    chmodSync(path.join(bin, 'npm'), 0o755);
    const output = execFileSync('bash', ['scripts/up.sh'], { cwd: clone, env: { ...process.env, PATH: `${bin}:${process.env.PATH}` }, encoding: 'utf8' });

    expect(output).toMatch(/bootstrap: installing npm dependencies\nbootstrap: generating the Prisma clients\nbootstrap: building the dashboard and the console\nbootstrap: ready \(node v24\.0\.0\)/);
    const calls = readFileSync(path.join(clone, 'calls.log'), 'utf8').trim().split('\n');
    expect(calls[0]).toMatch(/^npm ci /);
    expect(calls.at(-1)).toBe('node24 infra/local/src/up.ts');
  });
});
