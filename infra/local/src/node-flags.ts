/** The Node (V8) flags each process of the local stack runs with. */

/**
 * V8 sizing for small, long-running services: a 1 MiB young generation (instead of 16+) and a capped old generation
 * keep each process's resident memory near what it really holds; growing the old generation by 15 % of what survived
 * a full collection (instead of V8's 1.1–4x by GC speed) keeps a busy service's heap about 10 MiB smaller at the same
 * CPU per request; optimising with Maglev only (`--max-opt=2`, no TurboFan) takes another 4–5 MiB off most processes
 * and spends less CPU per request in these I/O-bound services. WebAssembly stays on Liftoff (`--liftoff-only`): V8
 * otherwise recompiles fetch's HTTP parser (undici's llhttp) and Prisma's query compiler with TurboFan once they are
 * hot, the parser's main function alone with 23 MiB of compiler memory, which glibc keeps; no measurable CPU per request
 * either way (docs/benchmarks.md). `STACK_NODE_FLAGS` replaces them.
 */
const DEFAULT_NODE_FLAGS = '--max-semi-space-size=1 --max-old-space-size=96 --heap-growing-percent=15 --max-opt=2 --liftoff-only';
/**
 * The flags a service runs with instead of the defaults above, where its work needs them: the backup catalog and the
 * gateway answer the console's timeline (a target's 2,000 backups and 50,000 change-log segments) within 100 ms only
 * with a 16 MiB young generation, V8's own heap growth and TurboFan (their CPU per answer halves), and the catalog
 * holds a target's whole change-log chain while computing it (about 25 MB for 50,000 segments over a resting heap of
 * about 50 MB). They cost those two processes more resident memory (docs/benchmarks.md, "Console").
 */
const SERVICE_NODE_FLAGS: Record<string, string> = {
  'backup-catalog': '--max-semi-space-size=16 --max-old-space-size=192',
  gateway: '--max-semi-space-size=16 --max-old-space-size=128',
  // The mover runs a restore's pipeline beside every target's change-capture stream, and since the change summaries
  // and previews each stream also reads pg_waldump / mariadb-binlog output and keeps the source's relation names: 96 MB
  // ran out of heap once in the console e2e (a restore of a 350 MB base while both demo targets streamed).
  mover: '--max-semi-space-size=1 --max-old-space-size=160 --heap-growing-percent=15 --max-opt=2 --liftoff-only',
};
/** The Node flags the stack runs a service with (benchmarks that start a service alone use the same). */
export const serviceNodeFlags = (service?: string): string[] =>
  (process.env.STACK_NODE_FLAGS ?? (service ? SERVICE_NODE_FLAGS[service] : undefined) ?? DEFAULT_NODE_FLAGS).split(/\s+/).filter(Boolean);
