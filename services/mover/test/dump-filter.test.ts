import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { zstdConsumed, zstdTotals } from '@strata/stream/zstd';
import { compressingFilter } from '../src/engines/compress-filter.ts';
import { runDump, toolEnv, type ToolStep } from '../src/engines/process.ts';

/** A dump whose tool writes through a filter program (as pg_basebackup writes through zstd), on real processes. */
function dumpThrough(step: Omit<ToolStep, 'env'>): { run: ReturnType<typeof runDump>; output: Promise<Buffer> } {
  const run = runDump(step.tool, async () => ({ steps: [{ ...step, env: toolEnv({}) }] }));
  const output = (async () => {
    const chunks: Buffer[] = [];
    for await (const chunk of run.stdout) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  })();
  output.catch(() => {});
  return { run, output };
}

const sh = (script: string) => ({ command: 'sh', args: ['-c', script] });

describe('a dump through a filter program', () => {
  it('hands the tool output to the filter directly, and the filter output is the dump', async () => {
    let said = '';
    const { run, output } = dumpThrough({
      tool: 'writer',
      ...sh('head -c 300000 /dev/zero; printf tail'),
      filter: { tool: 'zstd', command: 'zstd', args: ['-3', '-c', '-vv', '--no-progress'], onStderr: (chunk) => void (said += chunk.toString()) },
    });
    await run.done;
    const compressed = await output;
    const back = execFileSync('zstd', ['-d', '-c'], { input: compressed });
    expect(back.length).toBe(300_004);
    expect(back.subarray(-4).toString()).toBe('tail');
    expect(zstdTotals(said)).toEqual({ readBytes: 300_004, writtenBytes: compressed.length });
    expect(run.commands).toEqual([['sh', '-c', 'head -c 300000 /dev/zero; printf tail'], ['zstd', '-3', '-c', '-vv', '--no-progress']]);
  });

  it('tells the raw bytes consumed so far and, once done, exactly what zstd read and wrote (compressingFilter)', async () => {
    const compressing = compressingFilter({ algorithm: 'zstd', level: 'default', threads: 1 })!;
    const { run, output } = dumpThrough({ tool: 'writer', ...sh('head -c 3000000 /dev/urandom'), filter: compressing.filter });
    const compressedBy = compressing.compressedBy(run.done);
    await run.done;
    const compressed = await output;
    expect(await compressedBy.totals).toEqual({ readBytes: 3_000_000, writtenBytes: compressed.length });
    expect(compressedBy.rawProgress()).toBeGreaterThan(0);
    expect(compressedBy.rawProgress()).toBeLessThanOrEqual(3_000_000);
    expect(execFileSync('zstd', ['-d', '-c'], { input: compressed, maxBuffer: 8e6 }).length).toBe(3_000_000);
  });

  it('reads zstd progress and closing lines', () => {
    const said = '(L3) Buffered:131072 B - Consumed:    0 B - Compressed:    0 B => 0.00% \r(L3) Buffered:0 B - Consumed:2621440 B - Compressed:  901 B => 0.03% \r/*stdin*\\            :  0.03%   (3000000 B =>   1024 B, /*stdout*\\) \n';
    expect(zstdConsumed(said)).toBe(2_621_440);
    expect(zstdTotals(said)).toEqual({ readBytes: 3_000_000, writtenBytes: 1024 });
    expect(zstdConsumed('nothing yet')).toBeUndefined();
    expect(zstdTotals('(L3) Buffered:0 B - Consumed:5 B')).toBeUndefined();
  });

  it('fails with the tool message when the tool fails, though the filter ended well', async () => {
    const { run, output } = dumpThrough({ tool: 'writer', ...sh('printf partial; echo "writer: the server went away" >&2; exit 3'), filter: { tool: 'upper', ...sh('tr a-z A-Z') } });
    await expect(run.done).rejects.toThrow('writer: the server went away');
    await expect(output).rejects.toThrow('writer: the server went away');
  });

  it('fails with the filter message when the filter fails, not with the broken pipe it left the tool', async () => {
    const { run } = dumpThrough({ tool: 'writer', ...sh('yes 0123456789'), filter: { tool: 'upper', ...sh('head -c 10 >/dev/null; echo "upper: out of space" >&2; exit 4') } });
    await expect(run.done).rejects.toThrow('upper: out of space');
  });

  it('fails with a clear message when the filter cannot start, and starts no tool', async () => {
    const { run, output } = dumpThrough({ tool: 'writer', ...sh('printf data'), filter: { tool: 'zstd', command: '/nonexistent/zstd', args: [] } });
    await expect(run.done).rejects.toThrow('zstd: could not start /nonexistent/zstd');
    await expect(output).rejects.toThrow('could not start');
    expect(run.commands).toEqual([['sh', '-c', 'printf data'], ['/nonexistent/zstd']]);
  });

  it('stops a tool that is not writing when the filter dies, and leaves progress lines out of the message', async () => {
    const progress = Array.from({ length: 40 }, (_, i) => `(L3) Buffered:0 B - Consumed:${i} B`).join('\\r');
    const { run } = dumpThrough({
      tool: 'writer',
      ...sh('printf x; exec sleep 60'), // blocked, as pg_dump waiting on a lock: it would see the broken pipe only at its next write
      filter: { tool: 'zstd', ...sh(`head -c 1 >/dev/null; printf '${progress}\\r' >&2; echo "zstd: no space left on device" >&2; exit 1`), progressLine: /^\(L\d+\) Buffered:/ },
    });
    const failure = await run.done.then(() => undefined, (error: Error) => error);
    expect(failure?.message).toBe('zstd: no space left on device');
  });

  it('stops both programs when killed', async () => {
    // Neither ends by itself within the test's time: the filter does not even read.
    const { run } = dumpThrough({ tool: 'writer', ...sh('exec sleep 60'), filter: { tool: 'upper', ...sh('exec sleep 60') } });
    run.kill();
    await expect(run.done).rejects.toThrow(/writer was stopped/);
  });
});
