// The document's pages drawn with pdf.js, each with the fields laid over it where the template placed them
// (positions are PDF points from the page's top-left corner, laid out in percent so the page can be any width).
import * as pdfjs from '/sign/vendor/pdfjs/pdf.min.mjs';

pdfjs.GlobalWorkerOptions.workerSrc = '/sign/vendor/pdfjs/pdf.worker.min.mjs';

export async function renderPages(container, bytes, pageSizes) {
  const pdf = await pdfjs.getDocument({ data: new Uint8Array(bytes), isEvalSupported: false }).promise;
  const pages = [];
  for (let number = 1; number <= pdf.numPages; number++) {
    const page = await pdf.getPage(number);
    const size = pageSizes[number - 1] ?? { width: page.view[2], height: page.view[3] };
    const width = Math.min(container.clientWidth || 800, 1200);
    const viewport = page.getViewport({ scale: (width / size.width) * (window.devicePixelRatio || 1) });
    const holder = document.createElement('div');
    holder.className = 'page';
    holder.dataset.page = String(number);
    holder.style.aspectRatio = `${size.width} / ${size.height}`;
    const canvas = document.createElement('canvas');
    canvas.width = Math.round(viewport.width);
    canvas.height = Math.round(viewport.height);
    canvas.setAttribute('aria-label', `Page ${number} of ${pdf.numPages}`);
    canvas.setAttribute('role', 'img');
    holder.append(canvas);
    container.append(holder);
    await page.render({ canvas, canvasContext: canvas.getContext('2d'), viewport }).promise;
    pages.push({ holder, size });
  }
  return pages;
}

/** Places an element over a field's box on its page. */
export function place(element, field, pages) {
  const page = pages[field.page - 1];
  if (!page) return;
  Object.assign(element.style, {
    left: `${(field.x / page.size.width) * 100}%`,
    top: `${(field.y / page.size.height) * 100}%`,
    width: `${(field.width / page.size.width) * 100}%`,
    height: `${(field.height / page.size.height) * 100}%`,
  });
  page.holder.append(element);
}
