// On demand: DOCX to PDF of a 10-page document (p50 of 5 runs, alone and two at once) and the print of a 10-page
// document-mode body at publish, each against a baseline in the same process: LibreOffice converting a one-line
// DOCX (its start-up cost) and Chromium printing a one-line body. node_modules/.bin/node test/bench/template-files.ts
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createOfficeConverter } from '@sigil/templates/office-convert';
import { createBodyPrinter } from '@sigil/templates/print-body';

const RUNS = 5;
const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
const work = mkdtempSync(path.join(tmpdir(), 'bench-template-files-'));

function docx(name: string, html: string): Buffer {
  writeFileSync(path.join(work, `${name}.html`), `<html><body>${html}</body></html>`);
  execFileSync('soffice', [`-env:UserInstallation=file://${work}/profile`, '--headless', '--convert-to', 'docx:MS Word 2007 XML', '--outdir', work, path.join(work, `${name}.html`)], { stdio: 'ignore' });
  return readFileSync(path.join(work, `${name}.docx`));
}

const clauses = (pages: number) =>
  Array.from({ length: pages }, (_, p) => `<h2>Section ${p + 1}</h2>${Array.from({ length: 9 }, (_, i) => `<p>Clause ${p + 1}.${i + 1}: the parties agree that the obligations in this clause apply for the whole term of the agreement and survive its end where the law allows.</p>`).join('')}<p style="page-break-after: always"></p>`).join('');
const ten = docx('ten', clauses(10));
const one = docx('one', '<p>One line.</p>');
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const timed = async (run: () => Promise<unknown>) => {
  const start = performance.now();
  await run();
  return performance.now() - start;
};

const converter = createOfficeConverter({ workers: 2, timeoutMs: 120_000 });
const printer = createBodyPrinter();
try {
  await converter.toPdf(one, DOCX); // warm-up: the profiles are created on first use
  const base: number[] = [];
  const alone: number[] = [];
  const pair: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    base.push(await timed(() => converter.toPdf(one, DOCX)));
    alone.push(await timed(() => converter.toPdf(ten, DOCX)));
    pair.push(await timed(() => Promise.all([converter.toPdf(ten, DOCX), converter.toPdf(ten, DOCX)])));
  }
  console.log(`DOCX to PDF (LibreOffice, 2 workers), p50 of ${RUNS}:`);
  console.log(`  baseline: a one-line DOCX          ${median(base).toFixed(0)} ms`);
  console.log(`  10 pages                           ${median(alone).toFixed(0)} ms  (${(median(alone) / median(base)).toFixed(2)}x the baseline)`);
  console.log(`  10 pages, two at once (both done)  ${median(pair).toFixed(0)} ms  (${(median(pair) / median(alone)).toFixed(2)}x one alone)`);

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
  console.log(`  baseline: a one-line body          ${median(printBase).toFixed(0)} ms`);
  console.log(`  a ${pages}-page body                     ${median(printTen).toFixed(0)} ms  (${(median(printTen) / median(printBase)).toFixed(2)}x the baseline)`);
} finally {
  await converter.close();
  await printer.close();
}
