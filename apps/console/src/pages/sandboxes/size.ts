import { bytes, quantity, quantityBytes } from '../../format.ts';

/** "of 1.7 GB (4%)": the sandbox's size limit, as a size, and the share of it the data use (over it, the sandbox fails). */
export function limitShare(usedBytes: number, sizeLimit: string): string {
  if (!sizeLimit.trim()) return 'no size limit';
  const limit = quantityBytes(sizeLimit);
  const share = limit ? ` (${Math.round((usedBytes / limit) * 100)}%)` : '';
  return `of ${quantity(sizeLimit)}${share}`;
}

/** "42.6 MB of 1.1 GB (4%)": the disk the data use against the size limit. */
export function sizeUsed(usedBytes: number, sizeLimit: string): string {
  const share = limitShare(usedBytes, sizeLimit);
  return `${bytes(usedBytes)}${share.startsWith('of ') ? ' ' : ', '}${share}`;
}
