/**
 * MySQL and MariaDB: `mariadb-dump` (or `mysqldump`) per database, without `--databases`, so the
 * dump restores into a database of any name; restored with the `mariadb` (or `mysql`) client into
 * a database created beforehand with the source's default character set and collation, which the
 * dump carries on its first line (`-- strata-dump: {...}`, an SQL comment).
 *
 * Position: when the server has binlog on, the dump itself records its consistent position
 * (`--master-data=2`, plus `--gtid` on MariaDB, which reads it from the snapshot without a global
 * lock); DumpProcess.position parses it from the stream. `position()` queries it (SHOW MASTER STATUS)
 * for callers that want it before the dump.
 *
 * excludeData: `--ignore-table-data=db.t` when the tool has it (MariaDB); otherwise a second,
 * schema-only run for those tables (`--no-data`), put before the main run so that views and
 * foreign keys of the main run find them.
 */
export { SYSTEM_DATABASES, quoteIdent } from './shared.ts';
export { tablesOf } from './tools.ts';
export { createMysqlDriver, mysqlDriver, type MysqlDriverOptions } from './driver.ts';
