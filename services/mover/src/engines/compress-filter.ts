/**
 * The zstd program as the filter of a dump step: it reads the tool's output through a pipe of their own, so the raw
 * dump never passes through the mover, and tells on stderr how much it has read so far and, at the end, exactly how
 * much it read and wrote.
 */
import { ZSTD_PROGRESS_LINE, zstdConsumed, zstdFilter, zstdTotals, type CompressionOptions } from '@strata/stream/zstd';
import type { ToolStep } from './process.ts';
import type { CompressedBy } from './types.ts';

export interface CompressingFilter {
  filter: NonNullable<ToolStep['filter']>;
  /** What the dump reports once its steps are known: `done` is the dump's. */
  compressedBy(done: Promise<void>): CompressedBy;
}

/** Undefined without compression, or when the zstd program (1.5 or later) is absent or switched off: the pipeline compresses then. */
export function compressingFilter(compression: CompressionOptions | undefined): CompressingFilter | undefined {
  const program = compression ? zstdFilter(compression) : undefined;
  if (!program) return undefined;
  let said = '';
  let consumed = 0;
  const onStderr = (chunk: Buffer): void => {
    said = (said + chunk.toString('latin1')).slice(-4096);
    consumed = Math.max(consumed, zstdConsumed(said) ?? 0);
  };
  return {
    filter: { tool: 'zstd', ...program, onStderr, progressLine: ZSTD_PROGRESS_LINE },
    compressedBy(done) {
      const totals = done.then(() => {
        const counted = zstdTotals(said);
        if (!counted) throw new Error(`zstd did not report the bytes it compressed: ${said.trim().slice(-500) || 'it said nothing'}`);
        return counted;
      });
      totals.catch(() => {});
      return { rawProgress: () => consumed, totals };
    },
  };
}
