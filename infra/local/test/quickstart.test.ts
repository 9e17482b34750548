import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { applyQuickstartOnce, QUICKSTART_FILE, type RunStrata } from '../src/quickstart.ts';

/** A stand-in for the CLI that records each command and, like `strata quickstart`, writes the file it is given. */
function recordingCli(): { run: RunStrata; calls: Array<{ args: string[]; env: NodeJS.ProcessEnv }> } {
  const calls: Array<{ args: string[]; env: NodeJS.ProcessEnv }> = [];
  const run: RunStrata = async (args, env) => {
    calls.push({ args, env });
    if (args[0] === 'quickstart') writeFileSync(args[args.indexOf('--file') + 1]!, 'kind: BackupTarget\n');
  };
  return { run, calls };
}

const both = { postgres: true, mysql: true };

describe("the quickstart on the stack's first start", () => {
  it('signs in, applies the quickstart into the state folder and starts a first backup of each target, once', async () => {
    const stateDir = mkdtempSync(path.join(tmpdir(), 'quickstart-'));
    const cli = recordingCli();
    const said = await applyQuickstartOnce({ stateDir, gatewayUrl: 'http://127.0.0.1:8080', demo: both, env: { PATH: '/usr/bin' }, run: cli.run });
    expect(said).toMatch(/^applied: targets default\/postgres and default\/mariadb/);
    expect(cli.calls.map((c) => c.args.slice(0, 2).join(' '))).toEqual(['login --server', 'quickstart --apply', 'backup-now default/postgres', 'backup-now default/mariadb']);
    expect(cli.calls[1]!.args).toContain(path.join(stateDir, QUICKSTART_FILE));
    expect(cli.calls.every((c) => c.env.STRATA_CONFIG === path.join(stateDir, 'strata-cli.json') && c.env.SIGIL_STATE_DIR === stateDir && c.env.PATH === '/usr/bin')).toBe(true);
    expect(existsSync(path.join(stateDir, QUICKSTART_FILE))).toBe(true);

    const again = recordingCli();
    expect(await applyQuickstartOnce({ stateDir, gatewayUrl: 'http://127.0.0.1:8080', demo: both, env: {}, run: again.run })).toMatch(/earlier start/);
    expect(again.calls).toEqual([]);
  });

  it('never backs up a server the environment named, and is skipped with STRATA_QUICKSTART=0', async () => {
    const cli = recordingCli();
    const stateDir = mkdtempSync(path.join(tmpdir(), 'quickstart-'));
    expect(await applyQuickstartOnce({ stateDir, gatewayUrl: 'http://x', demo: { postgres: true, mysql: false }, env: {}, run: cli.run })).toMatch(/only demo databases of servers it runs itself/);
    expect(await applyQuickstartOnce({ stateDir, gatewayUrl: 'http://x', demo: both, env: { STRATA_QUICKSTART: '0' }, run: cli.run })).toMatch(/STRATA_QUICKSTART=0/);
    expect(cli.calls).toEqual([]);
  });

  it('stops at the first command that fails, and applies again on the next start', async () => {
    const stateDir = mkdtempSync(path.join(tmpdir(), 'quickstart-'));
    const failing: RunStrata = async (args) => {
      if (args[0] === 'login') throw new Error('strata login: the gateway did not answer');
    };
    await expect(applyQuickstartOnce({ stateDir, gatewayUrl: 'http://x', demo: both, env: {}, run: failing })).rejects.toThrow(/did not answer/);
    expect(existsSync(path.join(stateDir, QUICKSTART_FILE))).toBe(false);
  });
});
