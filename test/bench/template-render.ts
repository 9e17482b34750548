// On demand: the preview of a 20-page PDF with 40 variable-bound fields (issue 9: p50 at most 300 ms), against a
// baseline in the same process: pdf-lib loading and saving the same PDF untouched. Storage and the database are
// left out: this is the render itself. node_modules/.bin/node test/bench/template-render.ts
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { previewOfPdf } from '@sigil/templates/render';

const RUNS = Number(process.env.BENCH_RUNS ?? 25);

const doc = await PDFDocument.create();
const font = await doc.embedFont(StandardFonts.TimesRoman);
for (let p = 0; p < 20; p++) {
  const page = doc.addPage([612, 792]);
  for (let line = 0; line < 40; line++) page.drawText(`Clause ${p + 1}.${line + 1}: the parties agree to the terms set out in this clause.`, { x: 72, y: 740 - line * 16, size: 10, font });
}
const pdf = Buffer.from(await doc.save());
const fields = Array.from({ length: 40 }, (_, i) => ({
  id: `f${i}`, role: 'client', type: 'text' as const, required: true, page: (i % 20) + 1, x: 72, y: 100 + Math.floor(i / 20) * 40, width: 300, height: 20, variable: `v${i}`,
}));
const values = Object.fromEntries(fields.map((f, i) => [`v${i}`, `Value number ${i} for the preview`]));

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const time = async (run: () => Promise<unknown>) => {
  const samples: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const start = performance.now();
    await run();
    samples.push(performance.now() - start);
  }
  return samples;
};

for (let i = 0; i < 3; i++) await previewOfPdf(pdf, fields, values, 'test'); // warm-up
const baseline: number[] = [];
const preview: number[] = [];
for (let round = 0; round < 2; round++) {
  baseline.push(...(await time(async () => (await PDFDocument.load(pdf)).save())));
  preview.push(...(await time(() => previewOfPdf(pdf, fields, values, 'test'))));
}
console.log(`20-page PDF (${(pdf.length / 1024).toFixed(0)} KiB), 40 fields, ${preview.length} runs each, interleaved:`);
console.log(`  baseline: pdf-lib load + save   p50 ${median(baseline).toFixed(1)} ms`);
console.log(`  preview (fill + watermark)      p50 ${median(preview).toFixed(1)} ms   ratio ${(median(preview) / median(baseline)).toFixed(2)}x   target p50 <= 300 ms`);
