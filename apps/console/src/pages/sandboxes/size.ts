import { bytes } from '../../format.ts';

const BINARY_UNITS: Record<string, number> = { Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3, Ti: 1024 ** 4 };

/** The bytes of a size limit as the sandbox service writes it (`1Gi`, `1536Mi`, `1000`), or undefined. */
export function quantityBytes(quantity: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti)?$/.exec(quantity.trim());
  if (!match) return undefined;
  return Number(match[1]) * (match[2] ? (BINARY_UNITS[match[2]] ?? 1) : 1);
}

/** "of 1Gi (4%)": the sandbox's size limit and the share of it the data use (over it, the sandbox fails). */
export function limitShare(usedBytes: number, sizeLimit: string): string {
  const limit = quantityBytes(sizeLimit);
  const share = limit ? ` (${Math.round((usedBytes / limit) * 100)}%)` : '';
  return `of ${sizeLimit || 'no limit'}${share}`;
}

/** "42.6 MB of 1Gi (4%)": the disk the data use against the size limit. */
export function sizeUsed(usedBytes: number, sizeLimit: string): string {
  return `${bytes(usedBytes)} ${limitShare(usedBytes, sizeLimit)}`;
}
