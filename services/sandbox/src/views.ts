import { sandboxTunnelPath } from '@sigil/proto/routes';
import { formatQuantity } from './quantity.ts';
import type { SandboxRow } from './db.ts';

/** The console's Sandbox object. */
export function sandboxView(row: SandboxRow) {
  const up = row.port !== null && ['Restoring', 'Ready'].includes(row.phase);
  return {
    name: row.name,
    namespace: row.namespace,
    backupID: row.backupId,
    connect: row.expose && up ? `strata connect ${row.name}` : '',
    database: row.database,
    databases: row.databases,
    engine: row.engine,
    host: up ? row.host : '',
    ...(up ? { port: row.port as number } : {}),
    inCluster: up ? `${row.host}:${row.port}` : '',
    message: row.message,
    owner: row.owner,
    phase: row.phase,
    restore: row.restoreName,
    route: row.expose && up ? sandboxTunnelPath(row.name) : '',
    sizeLimit: formatQuantity(Number(row.sizeLimitBytes)),
    usedBytes: Number(row.usedBytes),
    target: `${row.targetNamespace}/${row.targetName}`,
    created: row.createdAt.toISOString(),
    expires: row.expiresAt.toISOString(),
    ...(row.readyAt ? { ready: row.readyAt.toISOString() } : {}),
    ...(row.dataTime ? { time: row.dataTime.toISOString() } : {}),
    resetGeneration: row.resetGeneration,
    observedResetGeneration: row.observedReset,
    extensions: row.extensions as Array<{ by: string; granted: string; reason: string; user: string; at: string }>,
  };
}
