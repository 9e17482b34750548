import { createHash } from 'node:crypto';
import { fileTypeFromBuffer } from 'file-type';
import type { UploadedFile } from '@sigil/kit/api';
import { AppError, notFound } from '@sigil/kit/errors';
import { featureNotOnPlan, type EntitlementsCache } from '@sigil/kit/entitlements';
import type { FileStore } from '@strata/stream/file-store';
import type { Db } from '../db.ts';
import { logoUrlOf } from './branding.ts';
import { parseSvg, sanitizeSvg } from './svg.ts';

/** The spec's bound; the multipart parser refuses a larger file with 413 before the handler runs. */
export const LOGO_MAX_BYTES = 512 * 1024;

const EXTENSIONS = { 'image/png': 'png', 'image/jpeg': 'jpg', 'image/webp': 'webp', 'image/svg+xml': 'svg' } as const;
type LogoType = keyof typeof EXTENSIONS;

/** Served with every logo: never sniffed, nothing runs or loads even when an SVG is opened on its own, cached for good. */
export const LOGO_HEADERS = {
  'x-content-type-options': 'nosniff',
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; sandbox",
  'cache-control': 'public, max-age=31536000, immutable',
  'cross-origin-resource-policy': 'cross-origin',
} as const;

const unsupported = (detail: string) => new AppError('unsupported-media-type', detail, { errors: [{ pointer: '/body/file', detail: 'must be a PNG, JPEG, WebP or SVG image' }] });

/** The logo's type read from its bytes (never its name or declared type), and the bytes to store (an SVG sanitised). */
export async function readLogo(bytes: Buffer): Promise<{ contentType: LogoType; bytes: Buffer }> {
  const detected = await fileTypeFromBuffer(bytes);
  if (detected && detected.mime in EXTENSIONS && detected.mime !== 'image/svg+xml') return { contentType: detected.mime as LogoType, bytes };
  if (!detected || detected.mime === 'application/xml') {
    const svg = parseSvg(bytes);
    if (svg) return { contentType: 'image/svg+xml', bytes: sanitizeSvg(svg) };
  }
  throw unsupported(`The logo must be a PNG, JPEG, WebP or SVG image; this file is ${detected ? `${detected.mime}` : 'none of them'} (its type is read from its bytes, not its name).`);
}

const storeKey = (organizationId: string, file: string) => `logos/${organizationId}/${file}`;

export interface LogoServiceDeps {
  db: Db;
  /** Where logo bytes are kept (S3); without one, uploads answer 503 and no logo is served. */
  store?: FileStore;
  entitlements: EntitlementsCache;
  publicUrl: string;
  clock: () => Date;
  notifyChanged: (organizationId: string) => void;
}

/** Logos read lately, kept in memory up to this many bytes: a name always has the same bytes, so none goes stale. */
const SERVED_CACHE_BYTES = 8 * 1024 * 1024;

/** The organization's logo: uploaded (plan `branding`), kept under a content-addressed name, served publicly. */
export function createLogoService(deps: LogoServiceDeps) {
  const served = new Map<string, { contentType: string; bytes: Buffer }>();
  let servedBytes = 0;
  const remember = (key: string, logo: { contentType: string; bytes: Buffer }) => {
    served.set(key, logo);
    servedBytes += logo.bytes.length;
    // A Map iterates in insertion order: the first key is the one read least recently.
    for (const [oldest, entry] of served) {
      if (servedBytes <= SERVED_CACHE_BYTES) break;
      served.delete(oldest);
      servedBytes -= entry.bytes.length;
    }
  };

  const store = (): FileStore => {
    if (!deps.store) throw new AppError('service-unavailable', 'Logo storage is not configured on this deployment.');
    return deps.store;
  };

  return {
    /** Stores the logo and makes it the branding's; 201 `{ object: 'logo', url }`. */
    async upload(organizationId: string, file: UploadedFile | undefined): Promise<{ object: 'logo'; url: string }> {
      const entitlements = await deps.entitlements.get(organizationId);
      if (!entitlements.features.branding) throw featureNotOnPlan(entitlements, 'branding', `A logo is custom branding, which is not on the ${entitlements.planName} plan. Upgrade to use it.`);
      if (!file || file.bytes.length === 0) throw new AppError('validation-failed', 'Send the logo as the multipart part `file`.', { errors: [{ pointer: '/body/file', detail: 'is required (a PNG, JPEG, WebP or SVG image)' }] });
      if (file.bytes.length > LOGO_MAX_BYTES) throw new AppError('payload-too-large', `The logo is larger than the limit of 512 KB (${LOGO_MAX_BYTES} bytes).`);
      const logo = await readLogo(file.bytes);
      const name = `${createHash('sha256').update(logo.bytes).digest('hex').slice(0, 32)}.${EXTENSIONS[logo.contentType]}`;
      // Same bytes, same name: storing again writes what is there.
      await store().put(storeKey(organizationId, name), logo.bytes, logo.contentType);
      const now = deps.clock();
      await deps.db.$transaction(async (tx) => {
        await tx.organizationLogo.upsert({
          where: { organizationId_file: { organizationId, file: name } },
          create: { organizationId, file: name, contentType: logo.contentType, size: logo.bytes.length, createdAt: now },
          update: {},
        });
        await tx.emailBranding.upsert({ where: { organizationId }, create: { organizationId, logoFile: name, updatedAt: now }, update: { logoFile: name, updatedAt: now } });
      });
      deps.notifyChanged(organizationId);
      return { object: 'logo', url: logoUrlOf(deps.publicUrl, organizationId, name) };
    },

    /** A logo any organization uploaded, by its URL's name (earlier logos too: e-mails already sent show them). */
    async read(organizationId: string, file: string): Promise<{ contentType: string; bytes: Buffer }> {
      const key = storeKey(organizationId, file);
      const cached = served.get(key);
      if (cached) {
        served.delete(key);
        served.set(key, cached);
        return cached;
      }
      const row = await deps.db.organizationLogo.findUnique({ where: { organizationId_file: { organizationId, file } } });
      if (!row || !deps.store) throw notFound('Logo');
      const logo = { contentType: row.contentType, bytes: await deps.store.get(key) };
      remember(key, logo);
      return logo;
    },
  };
}

export type LogoService = ReturnType<typeof createLogoService>;
