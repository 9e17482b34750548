import type * as PdfJs from 'pdfjs-dist';
import type { PDFDocumentProxy } from 'pdfjs-dist';
// The worker is one of the app's own hashed assets (the CSP allows workers from the origin only).
import workerUrl from 'pdfjs-dist/build/pdf.worker.min.mjs?url';

let loading: Promise<typeof PdfJs> | undefined;

/** pdf.js, loaded on first use: its own chunk, never part of the app's first load. */
function pdfjs(): Promise<typeof PdfJs> {
  loading ??= import('pdfjs-dist').then((lib) => {
    lib.GlobalWorkerOptions.workerSrc = workerUrl;
    return lib;
  });
  return loading;
}

/** Opens a PDF's bytes; `destroy` ends its worker task when the document is no longer shown. */
export async function openPdf(bytes: ArrayBuffer): Promise<{ pdf: PDFDocumentProxy; destroy: () => Promise<void> }> {
  const lib = await pdfjs();
  const task = lib.getDocument({ data: new Uint8Array(bytes) });
  return { pdf: await task.promise, destroy: () => task.destroy() };
}

/**
 * Draws page `number` on `canvas`, `cssWidth` pixels wide (sharp on high-density screens). The returned `cancel`
 * stops a render still running (pdf.js refuses two renders on one canvas at once).
 */
export function drawPage(pdf: PDFDocumentProxy, number: number, canvas: HTMLCanvasElement, cssWidth: number): { done: Promise<void>; cancel: () => void } {
  let cancelled = false;
  let task: { cancel(): void } | undefined;
  const done = pdf.getPage(number).then(async (page) => {
    if (cancelled) return;
    const base = page.getViewport({ scale: 1 });
    const viewport = page.getViewport({ scale: (cssWidth / base.width) * (window.devicePixelRatio || 1) });
    canvas.width = Math.round(viewport.width);
    canvas.height = Math.round(viewport.height);
    const context = canvas.getContext('2d');
    if (!context) return;
    const render = page.render({ canvas, canvasContext: context, viewport });
    task = render;
    await render.promise.catch((error: unknown) => {
      if ((error as { name?: string }).name !== 'RenderingCancelledException') throw error;
    });
  });
  return {
    done,
    cancel() {
      cancelled = true;
      task?.cancel();
    },
  };
}
