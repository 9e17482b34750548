/**
 * PostgreSQL: one statement through the extended protocol (which refuses several statements in one string), with a
 * cap on the rows the server sends: `Execute` with a row count stops the portal there, so a huge result is never read.
 */

import pg from 'pg';
import type { Submittable } from 'pg';

export interface WireField {
  name: string;
  tableID: number;
  columnID: number;
  dataTypeID: number;
}

export interface WireResult {
  fields: WireField[];
  /** Cells as the server printed them (text format); null for SQL NULL. */
  rows: Array<Array<string | null>>;
  /** The portal had more rows than were asked for. */
  suspended: boolean;
  /** The command tag (`SELECT 3`, `INSERT 0 1`, `CREATE TABLE`); absent when suspended. */
  tag?: string;
}

// The part of pg's Connection a Submittable writes to (its typings lag behind the implementation).
interface Wire {
  parse(message: { text: string; name: string; types: number[] }): void;
  bind(message: { portal: string; statement: string; values: unknown[]; binary: boolean }): void;
  describe(message: { type: 'S' | 'P'; name: string }): void;
  execute(message: { portal: string; rows: number }): void;
  sync(): void;
  sendCopyFail(message: string): void;
}

type Mode = { describeOnly: true } | { describeOnly: false; maxRows: number };

class Statement implements Submittable {
  private fields: WireField[] = [];
  private readonly rows: Array<Array<string | null>> = [];
  private suspended = false;
  private tag: string | undefined;
  private settled = false;
  private readonly text: string;
  private readonly mode: Mode;
  private readonly done: (error: Error | undefined, result?: WireResult) => void;

  constructor(text: string, mode: Mode, done: (error: Error | undefined, result?: WireResult) => void) {
    this.text = text;
    this.mode = mode;
    this.done = done;
  }

  submit(connection: pg.Connection): void {
    const wire = connection as unknown as Wire;
    wire.parse({ text: this.text, name: '', types: [] });
    if (this.mode.describeOnly) {
      wire.describe({ type: 'S', name: '' });
    } else {
      wire.bind({ portal: '', statement: '', values: [], binary: false });
      wire.describe({ type: 'P', name: '' });
      wire.execute({ portal: '', rows: this.mode.maxRows });
    }
    wire.sync();
  }

  handleRowDescription(message: { fields: WireField[] }): void {
    this.fields = message.fields.map((f) => ({ name: f.name, tableID: f.tableID, columnID: f.columnID, dataTypeID: f.dataTypeID }));
  }

  handleDataRow(message: { fields: Array<string | null> }): void {
    this.rows.push(message.fields);
  }

  handlePortalSuspended(): void {
    this.suspended = true;
  }

  handleCommandComplete(message: { text: string }): void {
    this.tag = message.text;
  }

  handleEmptyQuery(): void {}

  handleCopyInResponse(connection: pg.Connection): void {
    (connection as unknown as Wire).sendCopyFail('COPY FROM STDIN is not available in a sandbox query');
  }

  handleCopyData(): void {}

  // After an error the client drops this statement, so ReadyForQuery never reaches it: settle here.
  handleError(error: Error): void {
    this.settle(error);
  }

  handleReadyForQuery(): void {
    this.settle(undefined);
  }

  private settle(error: Error | undefined): void {
    if (this.settled) return;
    this.settled = true;
    if (error) this.done(error);
    else this.done(undefined, { fields: this.fields, rows: this.rows, suspended: this.suspended, ...(this.tag !== undefined ? { tag: this.tag } : {}) });
  }
}

function submit(client: pg.Client, text: string, mode: Mode): Promise<WireResult> {
  return new Promise((resolve, reject) => {
    client.query(new Statement(text, mode, (error, result) => (error || !result ? reject(error ?? new Error('no result')) : resolve(result))));
  });
}

/** Parses a statement and describes its result columns without running it. */
export const describeStatement = (client: pg.Client, text: string): Promise<WireResult> => submit(client, text, { describeOnly: true });

/** Runs a statement and reads at most `maxRows` rows (0: all). */
export const executeStatement = (client: pg.Client, text: string, maxRows: number): Promise<WireResult> =>
  submit(client, text, { describeOnly: false, maxRows });

/** `INSERT 0 3` → INSERT, 3; `CREATE TABLE` → CREATE TABLE. */
export function parseTag(tag: string): { command: string; affected?: number } {
  const match = /^(.*?)((?: \d+)*)$/.exec(tag.trim());
  const command = match?.[1] ?? tag;
  const numbers = (match?.[2] ?? '').trim().split(' ').filter(Boolean);
  const last = numbers.at(-1);
  return last === undefined ? { command } : { command, affected: Number(last) };
}

export const isDatabaseError = (error: unknown): error is pg.DatabaseError => error instanceof pg.DatabaseError;
