import { useEffect, useRef, useState, type ReactNode } from 'react';
import type { PDFDocumentProxy } from 'pdfjs-dist';
import { drawPage, openPdf } from '../pdf.ts';
import type { PageSize } from './model.ts';

export interface PdfPagesProps {
  /** Reads the PDF's bytes; called again when `documentKey` changes. */
  load: () => Promise<ArrayBuffer>;
  documentKey: string;
  /** Each page's size in points (the API's, what positions are checked against); pdf.js's when not given. */
  pageSizes?: readonly PageSize[];
  /** What stands over page `number` (fields), laid out in percent of the page so any rendered width fits. */
  overlay?: (number: number, size: PageSize) => ReactNode;
  /** Props of each page's element (a drop target in the editor). */
  pageProps?: (number: number, size: PageSize) => React.HTMLAttributes<HTMLDivElement> & Record<`data-${string}`, string>;
  label: string;
}

/** A PDF's pages drawn with pdf.js (loaded lazily), each with an overlay: the field editor's and the preview's view. */
export function PdfPages({ load, documentKey, pageSizes, overlay, pageProps, label }: PdfPagesProps) {
  const [pdf, setPdf] = useState<PDFDocumentProxy>();
  const [sizes, setSizes] = useState<PageSize[]>([]);
  const [failure, setFailure] = useState<string>();
  const loadRef = useRef(load);
  loadRef.current = load;

  useEffect(() => {
    let current = true;
    let opened: { destroy: () => Promise<void> } | undefined;
    setFailure(undefined);
    loadRef
      .current()
      .then(openPdf)
      .then(async (document) => {
        opened = document;
        const doc = document.pdf;
        const viewports = await Promise.all(Array.from({ length: doc.numPages }, (_, i) => doc.getPage(i + 1).then((p) => p.getViewport({ scale: 1 }))));
        if (!current) return;
        setSizes(viewports.map((v) => ({ width: v.width, height: v.height })));
        setPdf(doc);
      })
      .catch((error: unknown) => current && setFailure(error instanceof Error ? error.message : String(error)));
    return () => {
      current = false;
      void opened?.destroy();
    };
  }, [documentKey]);

  if (failure) return <p role="alert" className="alert alert-error">The document could not be shown: {failure}</p>;
  if (!pdf) return <p className="muted" role="status">Loading the document…</p>;
  return (
    <div className="tpl-pages" aria-label={label} role="region">
      {sizes.map((fallback, i) => {
        const number = i + 1;
        const size = pageSizes?.[i] ?? fallback;
        return (
          <div key={number} className="tpl-page" style={{ aspectRatio: `${size.width} / ${size.height}` }} {...pageProps?.(number, size)}>
            <PageCanvas pdf={pdf} number={number} count={sizes.length} />
            <div className="tpl-page-overlay">{overlay?.(number, size)}</div>
          </div>
        );
      })}
    </div>
  );
}

/** One page's canvas, drawn again at its new width when the layout changes (sharp at any width). */
function PageCanvas({ pdf, number, count }: { pdf: PDFDocumentProxy; number: number; count: number }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  useEffect(() => {
    const element = canvas.current;
    if (!element) return;
    let render: ReturnType<typeof drawPage> | undefined;
    let drawnWidth = 0;
    const draw = () => {
      const width = Math.round(element.clientWidth);
      if (width === 0 || width === drawnWidth) return;
      drawnWidth = width;
      render?.cancel();
      render = drawPage(pdf, number, element, width);
      render.done.catch(() => undefined);
    };
    const observer = new ResizeObserver(draw);
    observer.observe(element);
    draw();
    return () => {
      observer.disconnect();
      render?.cancel();
    };
  }, [pdf, number]);
  return <canvas ref={canvas} className="tpl-page-canvas" role="img" aria-label={`Page ${number} of ${count}`} />;
}
