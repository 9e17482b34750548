/** The engine layer: one driver per engine the mover backs up with the engine's own tools. */
import type { StrataEngine } from '@sigil/proto/strata-jobs';
import { mysqlDriver } from './mysql/index.ts';
import { postgresDriver } from './postgres/index.ts';
import type { EngineDriver } from './types.ts';

export type * from './types.ts';
export { createMysqlDriver, mysqlDriver } from './mysql/index.ts';
export type { MysqlDriverOptions } from './mysql/index.ts';
export { postgresDriver } from './postgres/index.ts';
export { summarizeInventory } from './inventory.ts';
export type { InventorySummary } from './inventory.ts';
export { ToolError } from './tool-error.ts';
export { measureLoad } from './load.ts';
export type { LoadMeasures } from './load.ts';

/** The driver of an engine; mongodb has none (yet): its backups are not logical dumps of this kind. */
export function driverFor(engine: StrataEngine): EngineDriver {
  switch (engine) {
    case 'postgres':
      return postgresDriver;
    case 'mysql':
      return mysqlDriver;
    default:
      throw new Error(`no engine driver for "${engine}"`);
  }
}
