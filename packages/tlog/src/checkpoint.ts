/** C2SP tlog-checkpoint (https://c2sp.org/tlog-checkpoint): the text of a signed tree head. */
export interface Checkpoint {
  /** Names the log, e.g. `sigil.example/sigil/log/live`. */
  origin: string;
  treeSize: number;
  /** The RFC 6962 root, 32 bytes. */
  root: Buffer;
}

export function formatCheckpoint(c: Checkpoint): string {
  if (!c.origin || /\s/u.test(c.origin)) throw new Error('a checkpoint origin is one word');
  if (c.root.length !== 32) throw new Error('a checkpoint root is 32 bytes');
  return `${c.origin}\n${c.treeSize}\n${c.root.toString('base64')}\n`;
}

/** Parses a checkpoint's text (the note without its signatures); extension lines are allowed and ignored. */
export function parseCheckpoint(text: string): Checkpoint {
  const lines = text.split('\n');
  if (lines.length < 4 || lines[lines.length - 1] !== '') throw new Error('malformed checkpoint');
  const [origin, size, root] = lines as [string, string, string];
  if (!origin || !/^(0|[1-9][0-9]*)$/u.test(size)) throw new Error('malformed checkpoint');
  const bytes = Buffer.from(root, 'base64');
  if (bytes.length !== 32 || bytes.toString('base64') !== root) throw new Error('malformed checkpoint root');
  const treeSize = Number(size);
  if (!Number.isSafeInteger(treeSize)) throw new Error('checkpoint size out of range');
  return { origin, treeSize, root: bytes };
}
