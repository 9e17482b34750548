import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { PDFDocument, PDFFont, PDFPage } from 'pdf-lib';

/** pdf-lib (~20 MiB once loaded) comes with the first render or stamp, not at start. */
const pdfLib = () => import('pdf-lib');
import type { TemplateField } from '@sigil/proto/internal-templates';

/**
 * Dancing Script (SIL Open Font License), the handwriting-style face of typed signatures, with fontkit to embed it:
 * both loaded with the first typed signature (fontkit costs ~30 MiB), then kept.
 */
let handwritingFace: Promise<{ fontkit: Parameters<PDFDocument['registerFontkit']>[0]; bytes: Buffer }> | undefined;
const loadHandwriting = () =>
  (handwritingFace ??= Promise.all([
    import('@pdf-lib/fontkit'),
    readFile(createRequire(import.meta.url).resolve('@expo-google-fonts/dancing-script/400Regular/DancingScript_400Regular.ttf')),
  ]).then(([module, bytes]) => ({ fontkit: module.default, bytes })));

/**
 * The envelope's original document: the template version's PDF with every text field bound to a variable filled in
 * its box, any form flattened (nothing stays editable in the signed copy), and a diagonal TEST on every page of a
 * test-mode envelope. One load and one save.
 */
export async function renderOriginal(pdf: Buffer, fields: TemplateField[], variables: Record<string, string>, testMode: boolean): Promise<Buffer> {
  const lib = await pdfLib();
  const { PDFDocument, StandardFonts } = lib;
  const doc = await PDFDocument.load(pdf);
  const form = doc.getForm();
  if (form.getFields().length > 0) form.flatten();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const pages = doc.getPages();
  for (const field of fields) {
    const value = field.variable ? variables[field.variable] : undefined;
    const page = pages[field.page - 1];
    if (value !== undefined && page) drawInBox(page, font, value, field);
  }
  if (testMode) {
    const bold = await doc.embedFont(StandardFonts.HelveticaBold);
    for (const page of pages) stampTest(lib, page, bold);
  }
  return Buffer.from(await doc.save());
}

/**
 * Recipients' values drawn in their boxes (for the next signer to see, and in the completed document the seal signs):
 * text and dates as text, a checked box as a cross, a typed signature in a handwriting-style face (subset-embedded), a
 * drawn one as its image scaled into the box.
 */
export async function stampValues(pdf: Buffer, fields: TemplateField[], values: Record<string, unknown>): Promise<Buffer> {
  const { PDFDocument, StandardFonts } = await pdfLib();
  const doc = await PDFDocument.load(pdf);
  const font = await doc.embedFont(StandardFonts.Helvetica);
  let handwriting: PDFFont | undefined;
  const embedHandwriting = async () => {
    const face = await loadHandwriting();
    doc.registerFontkit(face.fontkit);
    return doc.embedFont(face.bytes, { subset: true });
  };
  const pages = doc.getPages();
  for (const field of fields) {
    const value = values[field.id];
    const page = pages[field.page - 1];
    if (value === undefined || value === null || value === false || !page) continue;
    const signature = value as { kind?: string; text?: string; image?: string };
    if (signature.kind === 'drawn' && signature.image) {
      const png = await doc.embedPng(Buffer.from(signature.image.slice(signature.image.indexOf(',') + 1), 'base64'));
      const scale = Math.min(field.width / png.width, field.height / png.height);
      page.drawImage(png, { x: field.x, y: page.getHeight() - field.y - field.height, width: png.width * scale, height: png.height * scale });
    } else if (signature.kind === 'typed' && signature.text) drawInBox(page, (handwriting ??= await embedHandwriting()), signature.text, field, 1.4);
    else if (value === true) drawInBox(page, font, 'X', field);
    else if (field.type !== 'attachment') drawInBox(page, font, String(value), field);
  }
  return Buffer.from(await doc.save());
}

/** Text in a field's box (positions are points from the top-left corner, PDF draws from the bottom-left). */
function drawInBox(page: PDFPage, font: PDFFont, text: string, box: Pick<TemplateField, 'x' | 'y' | 'width' | 'height'>, scale = 1): void {
  const size = Math.min(12 * scale, box.height * 0.7);
  const line = encodable(font, text.replace(/\s+/g, ' '));
  page.drawText(line, { x: box.x + 2, y: page.getHeight() - box.y - box.height + (box.height - size) / 2, size, font, maxWidth: box.width - 4 });
}

/** A face covers what it covers (the standard ones WinAnsi only): any other character becomes `?` rather than failing the render for good. */
function encodable(font: PDFFont, text: string): string {
  const known = new Set(font.getCharacterSet());
  return [...text].map((c) => (known.has(c.codePointAt(0) as number) ? c : '?')).join('');
}

function stampTest({ degrees, rgb }: Awaited<ReturnType<typeof pdfLib>>, page: PDFPage, font: PDFFont): void {
  const { width, height } = page.getSize();
  const size = Math.min(width, height) / 5;
  const half = (font.widthOfTextAtSize('TEST', size) / 2) * Math.SQRT1_2;
  page.drawText('TEST', { x: width / 2 - half, y: height / 2 - half, size, font, rotate: degrees(45), color: rgb(0.8, 0.1, 0.1), opacity: 0.18 });
}
