import type { Logger } from '@sigil/kit/log';
import { formatCheckpoint } from '@sigil/tlog/checkpoint';
import { foldSubtrees } from '@sigil/tlog/merkle';
import { signNote, type NoteSigner } from '@sigil/tlog/note';
import type { Db } from '../db.ts';
import { LOG_MODES, lockHead, type LogMode } from './store.ts';

export interface AnchorerDeps {
  db: Db;
  /** The anchor key (a C2SP signer key); its name is the `kid` of keys.json. */
  signer: NoteSigner;
  /** The checkpoint's origin line of a mode's log, e.g. `sigil.example/sigil/log/live`. */
  origin: (mode: LogMode) => string;
  /** At most one anchor per log per interval; new leaves are anchored within about 1.25 intervals. */
  intervalMs: number;
  clock?: () => Date;
  log: Logger;
}

export type AnchorRow = Awaited<ReturnType<Db['logAnchor']['findFirstOrThrow']>>;

/**
 * Records the signing key in the key set: its validity starts when it first signs, and the key it takes over from
 * gets its end. A key that was already replaced is refused, so an old replica cannot keep signing after a rotation.
 */
export async function registerAnchorKey(db: Db, signer: NoteSigner, now: Date): Promise<void> {
  await db.$transaction(async (tx) => {
    await tx.$executeRawUnsafe('SELECT pg_advisory_xact_lock(hashtext($1))', 'anchor_keys');
    const existing = await tx.anchorKey.findUnique({ where: { kid: signer.name } });
    if (existing?.notAfter) throw new Error(`the anchor key ${signer.name} was replaced on ${existing.notAfter.toISOString()}; configure the current key`);
    if (existing && !Buffer.from(existing.publicKey).equals(signer.publicKey)) throw new Error(`another key already has the name ${signer.name}`);
    if (existing) return;
    await tx.anchorKey.updateMany({ where: { notAfter: null }, data: { notAfter: now } });
    await tx.anchorKey.create({ data: { kid: signer.name, publicKey: new Uint8Array(signer.publicKey), verifierKey: signer.verifierKey, notBefore: now } });
  });
}

/**
 * Signs a new anchor of a mode's log when it has leaves no anchor covers yet, at most once per interval slot across
 * every replica: the head row's lock serialises the replicas, and the slot of the newest anchor is compared.
 */
export async function anchorOnce(deps: AnchorerDeps, mode: LogMode): Promise<AnchorRow | null> {
  const now = (deps.clock ?? (() => new Date()))();
  return deps.db.$transaction(async (tx) => {
    const head = await lockHead(tx, mode);
    if (head.size === 0) return null;
    const latest = await tx.logAnchor.findFirst({ where: { mode }, orderBy: { sequence: 'desc' } });
    if (latest && Number(latest.treeSize) >= head.size) return null;
    const slot = (at: Date) => Math.floor(at.getTime() / deps.intervalMs);
    if (latest && slot(latest.createdAt) >= slot(now)) return null;
    const root = foldSubtrees(head.frontier);
    const note = signNote(formatCheckpoint({ origin: deps.origin(mode), treeSize: head.size, root }), deps.signer);
    const signature = (note.trimEnd().split('\n').at(-1) as string).split(' ').at(-1) as string;
    return tx.logAnchor.create({
      data: { mode, origin: deps.origin(mode), treeSize: head.size, root: root.toString('hex'), checkpoint: note, kid: deps.signer.name, signature, createdAt: now },
    });
  });
}

/** Every replica runs one: it ticks four times per interval and anchors whatever is due. */
export async function startAnchorer(deps: AnchorerDeps): Promise<{ stop: () => Promise<void>; tick: () => Promise<void> }> {
  await registerAnchorKey(deps.db, deps.signer, (deps.clock ?? (() => new Date()))());
  let running: Promise<void> | null = null;
  const tick = async () => {
    for (const mode of LOG_MODES) {
      try {
        const anchor = await anchorOnce(deps, mode);
        if (anchor) deps.log.info({ mode, sequence: Number(anchor.sequence), treeSize: Number(anchor.treeSize) }, 'anchor signed');
      } catch (error) {
        deps.log.error({ err: error, mode }, 'anchoring failed; retrying at the next tick');
      }
    }
  };
  // A tick still running when the next is due is joined, not queued behind.
  const run = () => (running ??= tick().finally(() => (running = null)));
  const timer = setInterval(() => void run(), Math.max(50, Math.floor(deps.intervalMs / 4)));
  timer.unref();
  return {
    tick: run,
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
}

export function anchorView(row: AnchorRow) {
  return {
    object: 'anchor' as const,
    sequence: Number(row.sequence),
    mode: row.mode as LogMode,
    origin: row.origin,
    treeSize: Number(row.treeSize),
    root: row.root,
    checkpoint: row.checkpoint,
    kid: row.kid,
    signature: row.signature,
    createdAt: row.createdAt.toISOString(),
  };
}
