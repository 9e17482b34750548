const UNITS: Array<[string, number]> = [['Ti', 1024 ** 4], ['Gi', 1024 ** 3], ['Mi', 1024 ** 2], ['Ki', 1024]];

/** `2Gi`, `1536Mi`, `1000`: the largest binary unit that divides the bytes exactly (parseQuantity reads it back). */
export function formatQuantity(bytes: number): string {
  for (const [unit, size] of UNITS) if (bytes >= size && bytes % size === 0) return `${bytes / size}${unit}`;
  return String(bytes);
}
