import type { PDFFont, PDFPage, RGB } from 'pdf-lib';
import type { AuditItem } from '@sigil/proto/audit-chain';

export interface CertificateInput {
  envelope: {
    id: string;
    testMode: boolean;
    template?: string;
    createdAt?: string;
    completedAt?: string | null;
    recipients: Array<{ id: string; role: string; name?: string; email?: string; verification?: string; sentAt?: string | null; viewedAt?: string | null; completedAt?: string | null }>;
  };
  /** SHA-256 of the completed document the seal signs. */
  documentSha256: string;
  /** SHA-256 of the sealed PDF (what recipients keep and anyone can verify). */
  sealedSha256?: string;
  /** The public verification page for the sealed document (`<PUBLIC_URL>/verify#sha256=<hex>`), also as a QR code. */
  verifyUrl?: string;
  /** The audit trail as it stands when sealing. */
  entries: AuditItem[];
}

/** The standard fonts cover WinAnsi only: other characters print as `?`. */
const printable = (font: PDFFont, text: string) => {
  const known = new Set(font.getCharacterSet());
  return [...text].map((c) => (known.has(c.codePointAt(0) as number) ? c : '?')).join('');
};

/**
 * The certificate of completion: what was signed (the document's SHA-256), by whom, when and from where (the audit
 * trail's signer entries), and the trail's length and head so it can be checked against `GET /v1/envelopes/{id}/events`.
 * Sealed with the same signature as the document.
 */
export async function buildCertificate(input: CertificateInput): Promise<Buffer> {
  // pdf-lib and qrcode are loaded with the first certificate, not in every evidence process.
  const [{ PDFDocument, StandardFonts, rgb }, { default: QRCode }] = await Promise.all([import('pdf-lib'), import('qrcode')]);
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const bold = await doc.embedFont(StandardFonts.HelveticaBold);
  let page: PDFPage = doc.addPage([612, 792]);
  let y = 740;
  const line = (text: string, options: { size?: number; font?: PDFFont; gap?: number; color?: number; width?: number } = {}) => {
    if (y < 60) {
      page = doc.addPage([612, 792]);
      y = 740;
    }
    const size = options.size ?? 10;
    const face = options.font ?? font;
    page.drawText(printable(face, text), { x: 56, y, size, font: face, color: rgb(options.color ?? 0.1, options.color ?? 0.1, options.color ?? 0.1), maxWidth: options.width ?? 500 });
    y -= options.gap ?? size + 6;
  };
  const { envelope } = input;
  line('Certificate of completion', { size: 20, font: bold, gap: 30 });
  if (envelope.testMode) line('TEST envelope: no legal effect.', { font: bold, gap: 20 });
  line(`Envelope: ${envelope.id}`);
  if (envelope.template) line(`Template: ${envelope.template}`);
  if (envelope.createdAt) line(`Created: ${envelope.createdAt}`);
  if (envelope.completedAt) line(`Completed: ${envelope.completedAt}`);
  line(`Completed document SHA-256: ${input.documentSha256}`, { gap: input.sealedSha256 ? 16 : 24 });
  if (input.sealedSha256) line(`Sealed document SHA-256: ${input.sealedSha256}`, { gap: 24 });
  line('Signers', { size: 13, font: bold, gap: 20 });
  for (const recipient of envelope.recipients) {
    const signed = input.entries.find((e) => e.type === 'recipient.signed' && (e.data as { recipientId?: string }).recipientId === recipient.id);
    const actor = (signed?.actor ?? {}) as { ip?: string; userAgent?: string };
    line(`${recipient.role}: ${recipient.name ?? ''} <${recipient.email ?? ''}>`, { font: bold });
    line(`  sent ${recipient.sentAt ?? '-'}, first viewed ${recipient.viewedAt ?? '-'}, signed ${recipient.completedAt ?? '-'}`);
    const verified = input.entries.find((e) => e.type === 'otp.verified' && (e.data as { recipientId?: string }).recipientId === recipient.id);
    const channel = (verified?.data as { channel?: string } | undefined)?.channel;
    line(`  identity: ${recipient.verification && recipient.verification !== 'none' ? `${recipient.verification} one-time code${channel ? ` (${channel})` : ''}, verified ${verified?.at ?? '-'}` : 'the e-mailed or issued signing link only'}`);
    line(`  from ${actor.ip ?? '-'}, ${(actor.userAgent ?? '-').slice(0, 90)}`, { gap: 20 });
  }
  const head = input.entries.at(-1);
  line('Audit trail', { size: 13, font: bold, gap: 20 });
  line(`${input.entries.length} entries; the last is #${head?.seq ?? 0} with hash ${head?.hash ?? '-'}`);
  line('Each entry is hashed as SHA-256 of its RFC 8785 canonical JSON and links to the previous one;', { color: 0.35 });
  line(`verify it with GET /v1/envelopes/${envelope.id}/events.`, { color: 0.35, gap: 24 });
  if (y < 200) {
    page = doc.addPage([612, 792]);
    y = 740;
  }
  line('Public verification', { size: 13, font: bold, gap: 20 });
  const qrTop = y;
  for (const text of [
    'The sealed document and this certificate are leaves of Sigil\'s',
    'public transparency log (RFC 6962), whose signed checkpoints anyone',
    'can check without an account: open the link or scan the code, run',
    '`npx sigil-verify <file>`, or POST the file\'s SHA-256 to',
    '/v1/public/verify.',
  ]) line(text, { color: 0.35 });
  if (input.verifyUrl) {
    line(input.verifyUrl, { size: 7, color: 0.2, width: 380 });
    drawQr(page, QRCode.create(input.verifyUrl, { errorCorrectionLevel: 'M' }).modules, rgb(0, 0, 0), { x: 450, top: qrTop + 4, size: 100 });
  }
  return Buffer.from(await doc.save());
}

/** A QR code's modules drawn as vector squares, `size` points wide, its top-left corner at (x, top). */
function drawQr(page: PDFPage, modules: { size: number; get(row: number, col: number): number | boolean }, black: RGB, at: { x: number; top: number; size: number }): void {
  const cell = at.size / modules.size;
  for (let row = 0; row < modules.size; row++) {
    for (let col = 0; col < modules.size; col++) {
      if (modules.get(row, col)) page.drawRectangle({ x: at.x + col * cell, y: at.top - (row + 1) * cell, width: cell, height: cell, color: black });
    }
  }
}
