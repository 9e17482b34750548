import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Browser } from 'playwright-core';
import type { DraftField } from './draft-input.ts';
import { FIELD_TAG } from './draft-input.ts';

const run = promisify(execFile);

/** Where a field landed in the printed PDF: page (1-based) and a box in points from the page's top-left corner. */
export interface FieldPosition {
  page: number;
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface PrintedBody {
  pdf: Buffer;
  pageCount: number;
  positions: Record<string, FieldPosition>;
}

export interface BodyPrinter {
  print(content: string, fields: DraftField[]): Promise<PrintedBody>;
  close(): Promise<void>;
}

/** The box a field gets in a document-mode body, in points, by type. */
const FIELD_BOX: Record<DraftField['type'], { width: number; height: number }> = {
  signature: { width: 200, height: 40 },
  initials: { width: 80, height: 40 },
  text: { width: 160, height: 20 },
  date: { width: 100, height: 20 },
  checkbox: { width: 14, height: 14 },
  attachment: { width: 160, height: 20 },
};

const MARKER = 'SIGILFIELDMARK';
const STYLE = "body{font-family:'Liberation Serif',serif;font-size:11pt;line-height:1.4}table{border-collapse:collapse}td,th{border:0.5pt solid #999;padding:2pt 4pt}img{max-width:100%}";

/**
 * Prints a document-mode body to PDF with Debian's Chromium (playwright-core, never a downloaded browser): US Letter,
 * one-inch margins, scripts off, no network. Each `{{field:id}}` becomes a box of its type's size; a first print with
 * a marker word in each box tells through `pdftotext -bbox` on which page and where it landed (the field's position).
 */
export function createBodyPrinter(options: { executablePath?: string; timeoutMs?: number } = {}): BodyPrinter {
  let browser: Promise<Browser> | undefined;
  const launch = () =>
    // playwright-core costs ~75 MiB once loaded: loaded with the first print, not in every templates process.
    (browser ??= import('playwright-core').then(({ chromium }) =>
      chromium.launch({
        executablePath: options.executablePath ?? '/usr/bin/chromium',
        args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
      }),
    ));

  return {
    async print(content, fields) {
      const byId = new Map(fields.map((field, index) => [field.id, { field, index }]));
      // The same layout twice: with a marker word in each field's box (to find where it landed), then without one,
      // so the PDF kept holds no hidden text. The box has a fixed size, so the marker does not move anything.
      const withBoxes = (marked: boolean) =>
        content.replace(FIELD_TAG, (_tag, id: string) => {
          const entry = byId.get(id);
          if (!entry) return '';
          const box = FIELD_BOX[entry.field.type];
          return `<span style="display:inline-block;vertical-align:bottom;overflow:hidden;width:${box.width}pt;height:${box.height}pt;border-bottom:0.75pt solid #555;font-size:4pt;line-height:4pt;color:#fff">${marked ? `${MARKER}${entry.index}` : ''}</span>`;
        });
      const context = await (await launch()).newContext({ javaScriptEnabled: false });
      try {
        await context.route('**/*', (route) => (route.request().url().startsWith('data:') ? route.continue() : route.abort()));
        const page = await context.newPage();
        page.setDefaultTimeout(options.timeoutMs ?? 30_000);
        const toPdf = async (html: string) => {
          await page.setContent(`<!doctype html><html><head><meta charset="utf-8"><style>${STYLE}</style></head><body>${html}</body></html>`, { waitUntil: 'load' });
          return page.pdf({ format: 'Letter', margin: { top: '1in', right: '1in', bottom: '1in', left: '1in' }, printBackground: true });
        };
        const { pageCount, markers } = await locateMarkers(await toPdf(withBoxes(true)));
        const positions: Record<string, FieldPosition> = {};
        for (const { field, index } of byId.values()) {
          const at = markers.get(index);
          if (at) positions[field.id] = { page: at.page, x: at.x, y: at.y, ...FIELD_BOX[field.type] };
        }
        return { pdf: await toPdf(withBoxes(false)), pageCount, positions };
      } finally {
        await context.close();
      }
    },
    async close() {
      if (browser) await (await browser).close();
    },
  };
}

/** The marker words of a printed PDF (`pdftotext -bbox`, points from the top-left), by field index. */
async function locateMarkers(pdf: Buffer): Promise<{ pageCount: number; markers: Map<number, { page: number; x: number; y: number }> }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'print-'));
  try {
    const file = path.join(dir, 'body.pdf');
    await writeFile(file, pdf);
    const { stdout } = await run('pdftotext', ['-bbox', file, '-'], { maxBuffer: 64 * 1024 * 1024 });
    const markers = new Map<number, { page: number; x: number; y: number }>();
    let page = 0;
    for (const line of stdout.split('\n')) {
      if (line.includes('<page ')) page += 1;
      const word = /<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="[\d.]+" yMax="[\d.]+">SIGILFIELDMARK(\d+)<\/word>/.exec(line);
      if (word) markers.set(Number(word[3]), { page, x: round(Number(word[1])), y: round(Number(word[2])) });
    }
    return { pageCount: page, markers };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const round = (n: number) => Math.round(n * 100) / 100;
