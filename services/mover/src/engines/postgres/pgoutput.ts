/**
 * The pgoutput messages (protocol version 1, text values) that masked previews read here: Relation (a table's schema,
 * column names and key columns as of the change) and Insert, Update and Delete (their tuples); the server itself reads
 * the commit position of each Begin (logical-previews.ts). See PostgreSQL's "Logical Replication Message Formats".
 */

export interface RelationMessage {
  relid: number;
  schema: string;
  table: string;
  columns: Array<{ name: string; key: boolean }>;
}

/** Column position (from 1) → value as text; SQL NULL is null; a value the message does not carry is left out. */
export type Tuple = Map<number, string | null>;

export type ChangeMessage =
  | { kind: 'insert'; relid: number; row: Tuple }
  | { kind: 'update'; relid: number; before?: { row: Tuple; keyOnly: boolean }; row: Tuple }
  | { kind: 'delete'; relid: number; before: { row: Tuple; keyOnly: boolean } };

export const MESSAGE = { begin: 0x42, relation: 0x52, insert: 0x49, update: 0x55, delete: 0x44 } as const;

class Reader {
  private at = 0;
  private readonly data: Buffer;

  constructor(data: Buffer) {
    this.data = data;
  }

  byte(): number {
    return this.data.readUInt8(this.at++);
  }

  int16(): number {
    const value = this.data.readInt16BE(this.at);
    this.at += 2;
    return value;
  }

  int32(): number {
    const value = this.data.readInt32BE(this.at);
    this.at += 4;
    return value;
  }

  uint32(): number {
    const value = this.data.readUInt32BE(this.at);
    this.at += 4;
    return value;
  }

  int64(): bigint {
    const value = this.data.readBigUInt64BE(this.at);
    this.at += 8;
    return value;
  }

  string(): string {
    const end = this.data.indexOf(0, this.at);
    if (end < 0) throw new Error('pgoutput: a string without its end');
    const value = this.data.toString('utf8', this.at, end);
    this.at = end + 1;
    return value;
  }

  /** `length` bytes as text, only the first `keep` characters decoded (a long value is cut anyway). */
  text(length: number, keep: number): string {
    const end = this.at + length;
    // A UTF-8 character is at most 4 bytes: decoding 4×keep+4 bytes yields at least keep+1 characters when there are more.
    const decoded = this.data.toString('utf8', this.at, Math.min(end, this.at + keep * 4 + 4));
    this.at = end;
    return decoded;
  }

  tuple(keep: number): Tuple {
    const columns = this.int16();
    const row: Tuple = new Map();
    for (let position = 1; position <= columns; position++) {
      const kind = this.byte();
      if (kind === 0x6e /* n */) row.set(position, null);
      else if (kind === 0x74 /* t */ || kind === 0x62 /* b */) row.set(position, this.text(this.int32(), keep));
      else if (kind !== 0x75 /* u: an unchanged TOASTed value, not sent */) throw new Error(`pgoutput: unknown column kind ${kind}`);
    }
    return row;
  }
}

export function parseRelation(data: Buffer): RelationMessage {
  const reader = new Reader(data.subarray(1));
  const relid = reader.uint32();
  const schema = reader.string();
  const table = reader.string();
  reader.byte(); // replica identity setting
  const count = reader.int16();
  const columns: RelationMessage['columns'] = [];
  for (let i = 0; i < count; i++) {
    const flags = reader.byte();
    const name = reader.string();
    reader.uint32(); // type oid
    reader.int32(); // type modifier
    columns.push({ name, key: (flags & 1) === 1 });
  }
  return { relid, schema, table, columns };
}

/**
 * An Insert, Update or Delete; values longer than `keep` characters are decoded only that far. An old tuple is the
 * whole row (`O`, REPLICA IDENTITY FULL) or only the key columns (`K`, the key changed or a row was deleted).
 */
export function parseChange(data: Buffer, keep: number): ChangeMessage {
  const reader = new Reader(data);
  const kind = reader.byte();
  const relid = reader.uint32();
  if (kind === MESSAGE.insert) {
    reader.byte(); // N
    return { kind: 'insert', relid, row: reader.tuple(keep) };
  }
  let next = reader.byte();
  let before: { row: Tuple; keyOnly: boolean } | undefined;
  if (next === 0x4b /* K */ || next === 0x4f /* O */) {
    before = { row: reader.tuple(keep), keyOnly: next === 0x4b };
    if (kind === MESSAGE.delete) return { kind: 'delete', relid, before };
    next = reader.byte();
  }
  if (kind === MESSAGE.update && next === 0x4e /* N */) return { kind: 'update', relid, ...(before ? { before } : {}), row: reader.tuple(keep) };
  throw new Error(`pgoutput: message ${String.fromCharCode(kind)} is not a row change this reader knows`);
}
