/**
 * Row images of a binlog in ROW format, from `mariadb-binlog --base64-output=decode-rows -v`: after each
 * Write/Update/Delete_rows event the tool prints every row as pseudo-SQL, columns by position:
 *
 *   ### INSERT INTO `shop`.`customers`        ### UPDATE `shop`.`customers`      ### DELETE FROM `shop`.`customers`
 *   ### SET                                   ### WHERE   (the row before)       ### WHERE
 *   ###   @1=1                                ###   @1=2 …                       ###   @1=1 …
 *   ###   @2='a@example.com'                  ### SET     (the row after) …
 *
 * Strings are quoted (control characters written `\x0a`), NULL is `NULL`, a negative integer is followed by its
 * unsigned reading (`-1 (4294967295)`). The rows go into a RowSamples, cut at its `maxValueLength`, while it wants them.
 */
import { cutValue, type PreviewKind, type RawRow, type RowSamples } from '../previews.ts';

const ROW_START = /^### (?:INSERT INTO|UPDATE|DELETE FROM) /;
const IMAGE = /^### (WHERE|SET)$/;
const VALUE = /^### {3}@(\d+)=(.*)$/;
const SIGNED = /^(-\d+) \(\d+\)$/;

/** A value as the tool prints it, as text: unquoted, NULL as null, a negative integer without its unsigned reading. */
export function binlogValue(text: string): string | null {
  if (text === 'NULL') return null;
  if (text.length >= 2 && text.startsWith("'") && text.endsWith("'")) return text.slice(1, -1);
  return SIGNED.exec(text)?.[1] ?? text;
}

/** Reads the `###` lines of one rows event after another; `end` closes the row being read (an event or a count ends it). */
export function binlogRowsReader(samples: () => RowSamples) {
  let row: { table: string; kind: PreviewKind; before?: RawRow; after?: RawRow; image?: RawRow } | undefined;

  const end = () => {
    const done = row;
    row = undefined;
    if (!done) return;
    if (done.kind === 'inserts' && done.after) samples().add(done.table, 'inserts', done.after);
    else if (done.kind === 'deletes' && done.before) samples().add(done.table, 'deletes', done.before);
    else if (done.kind === 'updates' && done.before && done.after) samples().add(done.table, 'updates', { before: done.before, after: done.after });
  };

  return {
    /** A `###` line of a rows event on `table` (resolved from its Table_map) of `kind`. */
    line(line: string, table: string, kind: PreviewKind): void {
      if (ROW_START.test(line)) {
        end();
        // A table and kind with enough samples already: its rows are not read.
        if (samples().wants(table, kind)) row = { table, kind };
        return;
      }
      if (!row) return;
      const image = IMAGE.exec(line);
      if (image) {
        row.image = new Map();
        if (image[1] === 'WHERE') row.before = row.image;
        else row.after = row.image;
        return;
      }
      const value = VALUE.exec(line);
      if (value?.[1] && value[2] !== undefined && row.image) {
        const text = binlogValue(value[2]);
        row.image.set(Number(value[1]), text === null ? null : cutValue(text, samples().settings.maxValueLength));
      }
    },
    end,
  };
}
