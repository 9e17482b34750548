// On demand: DOCX to PDF of a 10-page document through the converter's pool of running LibreOffice listeners (p50
// and p90, after a warm-up), against the same file through a freshly started `soffice --convert-to pdf` (the way
// before the listeners), interleaved in one process; two conversions at once; a hung LibreOffice killed while the
// pool goes on; and the print of a 10-page document-mode body at publish against a one-line body.
// node_modules/.bin/node test/bench/template-files.ts
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { createOfficeConverter, type OfficeConverter } from '@sigil/templates/office-convert';
import { createBodyPrinter } from '@sigil/templates/print-body';

const RUNS = 7;
const HANG_TIMEOUT_MS = 5_000;
const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
const work = mkdtempSync(path.join(tmpdir(), 'bench-template-files-'));
const run = promisify(execFile);

function docx(name: string, html: string): Buffer {
  writeFileSync(path.join(work, `${name}.html`), `<html><body>${html}</body></html>`);
  execFileSync('soffice', [`-env:UserInstallation=file://${work}/profile`, '--headless', '--convert-to', 'docx:MS Word 2007 XML', '--outdir', work, path.join(work, `${name}.html`)], { stdio: 'ignore' });
  return readFileSync(path.join(work, `${name}.docx`));
}

const clauses = (pages: number) =>
  Array.from({ length: pages }, (_, p) => `<h2>Section ${p + 1}</h2>${Array.from({ length: 9 }, (_, i) => `<p>Clause ${p + 1}.${i + 1}: the parties agree that the obligations in this clause apply for the whole term of the agreement and survive its end where the law allows.</p>`).join('')}<p style="page-break-after: always"></p>`).join('');
const ten = docx('ten', clauses(10));
const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * q))] as number;
const ms = (x: number) => `${x.toFixed(0)} ms`;
const timed = async (job: () => Promise<unknown>) => {
  const start = performance.now();
  await job();
  return performance.now() - start;
};
const pageCount = (pdf: Buffer) => {
  writeFileSync(path.join(work, 'count.pdf'), pdf);
  return /Pages:\s+(\d+)/.exec(execFileSync('pdfinfo', [path.join(work, 'count.pdf')], { encoding: 'utf8' }))?.[1];
};

/** The way before the listeners: one `soffice` started for the file, on a profile it has used before. */
async function freshSoffice(): Promise<void> {
  const out = mkdtempSync(path.join(work, 'fresh-'));
  await run('soffice', [`-env:UserInstallation=file://${work}/fresh-profile`, '--headless', '--norestore', '--nolockcheck', '--convert-to', 'pdf', '--outdir', out, path.join(work, 'ten.docx')]);
  rmSync(out, { recursive: true });
}

async function conversions(converter: OfficeConverter): Promise<void> {
  const pages = pageCount(await converter.toPdf(ten, DOCX));
  await Promise.all([converter.toPdf(ten, DOCX), converter.toPdf(ten, DOCX), freshSoffice()]); // warm-up: both listeners up
  const base: number[] = [];
  const pool: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    base.push(await timed(freshSoffice));
    pool.push(await timed(() => converter.toPdf(ten, DOCX)));
  }
  const pairs: number[][] = [];
  for (let i = 0; i < RUNS; i++) pairs.push(await Promise.all([timed(() => converter.toPdf(ten, DOCX)), timed(() => converter.toPdf(ten, DOCX))]));
  console.log(`DOCX to PDF, a ${pages}-page file, ${RUNS} runs each after a warm-up:`);
  console.log(`  baseline: a fresh soffice --convert-to pdf   p50 ${ms(quantile(base, 0.5))}`);
  console.log(`  the pool (2 running listeners)               p50 ${ms(quantile(pool, 0.5))}, p90 ${ms(quantile(pool, 0.9))}  (${(quantile(pool, 0.5) / quantile(base, 0.5)).toFixed(2)}x the baseline)`);
  console.log(`  two at once, both done                       p50 ${ms(quantile(pairs.map((pair) => Math.max(...pair)), 0.5))} (each p50 ${ms(quantile(pairs.flat(), 0.5))})`);
}

/** One listener frozen (SIGSTOP: it answers no one, as a hung LibreOffice) under two jobs at once, then the pool again. */
async function hang(): Promise<void> {
  const workDir = mkdtempSync(path.join(work, 'hang-'));
  const converter = createOfficeConverter({ workers: 2, timeoutMs: HANG_TIMEOUT_MS, workDir });
  try {
    await Promise.all([converter.toPdf(ten, DOCX), converter.toPdf(ten, DOCX)]);
    const frozen = execFileSync('pgrep', ['-f', `soffice.bin.*${workDir}/profile-1`], { encoding: 'utf8' }).trim();
    process.kill(Number(frozen), 'SIGSTOP');
    const outcomes = await Promise.all([0, 1].map((i) => timedOutcome(converter, i)));
    const after = await Promise.all([0, 1].map((i) => timedOutcome(converter, i)));
    console.log(`A hung LibreOffice (one of 2 listeners frozen, timeout ${HANG_TIMEOUT_MS / 1000} s), two jobs at once:`);
    for (const outcome of outcomes) console.log(`  ${outcome}`);
    console.log(`  then two at once again (a new listener started for one):`);
    for (const outcome of after) console.log(`  ${outcome}`);
  } finally {
    await converter.close();
  }
}

async function timedOutcome(converter: OfficeConverter, index: number): Promise<string> {
  const start = performance.now();
  const outcome = await converter.toPdf(ten, DOCX).then(
    (pdf) => `converted, ${pageCount(pdf)} pages`,
    (error: Error) => `failed: ${error.message}`,
  );
  return `job ${index + 1}: ${ms(performance.now() - start)}  ${outcome}`;
}

async function printing(): Promise<void> {
  const printer = createBodyPrinter();
  try {
    const fields = [{ id: 'sig', role: 'client', type: 'signature' as const, required: true }];
    const body = `${clauses(10)}<p>Signed: {{field:sig}}</p>`;
    await printer.print('<p>warm-up {{field:sig}}</p>', fields);
    const printBase: number[] = [];
    const printTen: number[] = [];
    let pages = 0;
    for (let i = 0; i < RUNS; i++) {
      printBase.push(await timed(() => printer.print('<p>One line. {{field:sig}}</p>', fields)));
      printTen.push(await timed(async () => void (pages = (await printer.print(body, fields)).pageCount)));
    }
    console.log(`Publishing a document-mode body (Chromium print, located fields, printed again), p50 of ${RUNS}:`);
    console.log(`  baseline: a one-line body          ${ms(quantile(printBase, 0.5))}`);
    console.log(`  a ${pages}-page body                     ${ms(quantile(printTen, 0.5))}  (${(quantile(printTen, 0.5) / quantile(printBase, 0.5)).toFixed(2)}x the baseline)`);
  } finally {
    await printer.close();
  }
}

const converter = createOfficeConverter({ workers: 2, timeoutMs: 120_000 });
try {
  await conversions(converter);
} finally {
  await converter.close();
}
await hang();
await printing();
rmSync(work, { recursive: true, force: true });
