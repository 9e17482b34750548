// The LibreOffice listeners behind the converter: one per worker, replaced when it dies, killed when it hangs or
// never starts answering, all stopped by close(). Processes are found by their profile folder, under each test's
// own work folder.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as wait } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isAppError } from '@sigil/kit/errors';
import { createOfficeConverter, type OfficeConverter } from '../src/files/office-convert.ts';

const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
const folders: string[] = [];
const folder = (name: string): string => {
  folders.push(mkdtempSync(path.join(tmpdir(), `office-pool-${name}-`)));
  return folders.at(-1)!;
};
const work = folder('fixtures');
let docx: Buffer;
afterAll(() => folders.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

beforeAll(() => {
  writeFileSync(path.join(work, 'letter.html'), '<html><body><h1>Engagement Letter</h1><p>Between Acme Corp and Globex.</p></body></html>');
  execFileSync('soffice', [`-env:UserInstallation=file://${work}/fixture-profile`, '--headless', '--convert-to', 'docx:MS Word 2007 XML', '--outdir', work, path.join(work, 'letter.html')], { stdio: 'ignore', timeout: 120_000 });
  docx = readFileSync(path.join(work, 'letter.docx'));
}, 180_000);

interface OfficeProcess {
  pid: number;
  args: string;
}

/** The live processes (zombies left out) whose arguments name `folder`: a pool's LibreOffice, by its profile. */
function processesUnder(folder: string): OfficeProcess[] {
  return execFileSync('ps', ['-eo', 'pid=,stat=,args='], { encoding: 'utf8' })
    .split('\n')
    .map((line) => /^\s*(\d+)\s+(\S+)\s+(.*)$/.exec(line))
    .filter((match) => match !== null && !match[2]!.startsWith('Z') && match[3]!.includes(folder))
    .map((match) => ({ pid: Number(match![1]), args: match![3]! }));
}

const officeBinary = (folder: string): OfficeProcess[] => processesUnder(folder).filter((p) => p.args.includes('soffice.bin'));

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Polls a condition a bounded number of times (the processes' ends are not events this test can wait on). */
async function eventually(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (condition()) return;
    await wait(50);
  }
  throw new Error(`never happened: ${what}`);
}

const pdfText = (pdf: Uint8Array): string => {
  const file = path.join(work, `out-${Math.random().toString(36).slice(2)}.pdf`);
  writeFileSync(file, pdf);
  return execFileSync('pdftotext', [file, '-'], { encoding: 'utf8' });
};

async function rejection(run: () => Promise<unknown>): Promise<Error> {
  try {
    await run();
  } catch (error) {
    return error as Error;
  }
  throw new Error('accepted');
}

/** A `soffice` stand-in that starts and never answers; it counts its starts and writes each one's pid. */
function silentOffice(folder: string): string {
  const script = path.join(folder, 'silent-soffice');
  writeFileSync(script, `#!/bin/sh\necho $$ >> "${folder}/starts"\nexec sleep 600\n`);
  chmodSync(script, 0o755);
  return script;
}
const startsOf = (folder: string): number[] => readFileSync(path.join(folder, 'starts'), 'utf8').trim().split('\n').map(Number);

describe('a worker whose LibreOffice died', () => {
  const workDir = folder('dead');
  let converter: OfficeConverter;
  beforeAll(() => void (converter = createOfficeConverter({ workers: 1, timeoutMs: 120_000, workDir })));
  afterAll(async () => converter?.close());

  it('converts on one LibreOffice kept running between jobs', async () => {
    expect(pdfText(await converter.toPdf(docx, DOCX))).toMatch(/Engagement Letter/);
    const [listener] = officeBinary(workDir);
    expect(listener?.args).toMatch(/--accept=pipe/);
    expect(pdfText(await converter.toPdf(docx, DOCX))).toMatch(/Acme Corp and Globex/);
    expect(officeBinary(workDir)).toEqual([listener]);
  }, 120_000);

  it('starts a new one for the next job once it was killed from outside', async () => {
    await converter.toPdf(docx, DOCX);
    const [killed] = officeBinary(workDir);
    process.kill(killed!.pid, 'SIGKILL');
    await eventually(() => processesUnder(workDir).length === 0, 'the killed LibreOffice and its wrapper are gone');
    expect(pdfText(await converter.toPdf(docx, DOCX))).toMatch(/Engagement Letter/);
    expect(officeBinary(workDir).map((p) => p.pid)).not.toContain(killed!.pid);
    expect(officeBinary(workDir)).toHaveLength(1);
  }, 120_000);

  it('converts on a new one when the running one no longer takes connections', async () => {
    await converter.toPdf(docx, DOCX);
    const wrapper = processesUnder(workDir).find((p) => !p.args.includes('soffice.bin'));
    const [dead] = officeBinary(workDir);
    // The wrapper stopped, its soffice.bin killed: the process the pool started lives on, its pipe is gone.
    process.kill(wrapper!.pid, 'SIGSTOP');
    process.kill(dead!.pid, 'SIGKILL');
    expect(pdfText(await converter.toPdf(docx, DOCX))).toMatch(/Engagement Letter/);
    expect(isAlive(wrapper!.pid)).toBe(false);
    expect(officeBinary(workDir).map((p) => p.pid)).not.toContain(dead!.pid);
  }, 120_000);

  it('close() stops it and leaves no LibreOffice behind', async () => {
    await converter.toPdf(docx, DOCX);
    expect(officeBinary(workDir)).toHaveLength(1);
    await converter.close();
    expect(processesUnder(workDir)).toEqual([]);
  }, 60_000);
});

describe('a LibreOffice that hangs', () => {
  it('is killed when a conversion outlives timeoutMs, and the next job converts on a fresh one', async () => {
    const workDir = folder('hang');
    const converter = createOfficeConverter({ workers: 1, timeoutMs: 10_000, workDir });
    try {
      await converter.toPdf(docx, DOCX);
      const [hung] = officeBinary(workDir);
      process.kill(hung!.pid, 'SIGSTOP');
      const started = performance.now();
      const error = await rejection(() => converter.toPdf(docx, DOCX));
      expect(isAppError(error) && error.status).toBe(400);
      expect(error.message).toBe('The conversion to PDF took longer than 10 s and was stopped.');
      expect(performance.now() - started).toBeGreaterThanOrEqual(10_000);
      expect(isAlive(hung!.pid)).toBe(false);
      expect(processesUnder(workDir)).toEqual([]);
      expect(pdfText(await converter.toPdf(docx, DOCX))).toMatch(/Engagement Letter/);
    } finally {
      await converter.close();
    }
  }, 180_000);

  it('is killed when it never starts answering, and the next job starts another', async () => {
    const workDir = folder('silent');
    const converter = createOfficeConverter({ workers: 1, timeoutMs: 120_000, startTimeoutMs: 500, workDir, command: silentOffice(workDir) });
    try {
      expect((await rejection(() => converter.toPdf(docx, DOCX))).message).toBe('LibreOffice did not start answering within 500 ms; it was stopped.');
      expect((await rejection(() => converter.toPdf(docx, DOCX))).message).toMatch(/did not start answering/);
      const starts = startsOf(workDir);
      expect(starts).toHaveLength(2);
      expect(starts.filter(isAlive)).toEqual([]);
    } finally {
      await converter.close();
    }
  }, 60_000);

  it('says what to install when the Python has no UNO bridge, and stops the LibreOffice it started', async () => {
    const workDir = folder('nouno');
    // Debian's Python without its site packages, where python3-uno lives.
    const noUno = path.join(workDir, 'python-without-uno');
    writeFileSync(noUno, '#!/bin/sh\nexec /usr/bin/python3 -S "$@"\n');
    chmodSync(noUno, 0o755);
    const converter = createOfficeConverter({ workers: 1, timeoutMs: 120_000, workDir, command: silentOffice(workDir), python: noUno });
    try {
      const error = await rejection(() => converter.toPdf(docx, DOCX));
      expect(isAppError(error)).toBe(false);
      expect(error.message).toMatch(/UNO client .* failed: cannot load the UNO bridge .*No module named 'uno'.* \(install python3-uno\)$/);
      expect(startsOf(workDir).filter(isAlive)).toEqual([]);
    } finally {
      await converter.close();
    }
  }, 60_000);
});
