/**
 * `getSegmentPreviews`: the masked sample rows the mover stored beside one segment, decrypted with the catalog's
 * identity (as an inventory is read). The rows were masked in the mover: the catalog never sees a masked value.
 * A file uploaded several times (partial uploads, then the finished one) answers with its newest upload, whose
 * previews cover the file from its start.
 */
import { AppError } from '@sigil/kit/errors';
import type { StrataPrincipal } from '@sigil/proto/strata';
import type { BackupDeps } from '../backups/backups.ts';
import { readCatalogJson } from '../backups/catalog-objects.ts';
import type { TargetService } from '../console/targets.ts';
import { findPolicy, findStore } from '../resources/stores.ts';
import { newestUploads } from './change-summaries.ts';
import { segmentView } from './segments.ts';
import { previewsState } from './streams.ts';

/** A segment's previews are a few rows per table: far below this. */
const MAX_PREVIEWS_BYTES = 16 * 1024 * 1024;

export async function segmentPreviews(deps: BackupDeps & { targets: TargetService }, principal: StrataPrincipal, namespace: string, name: string, segment: string) {
  const target = await deps.targets.visibleTarget(principal, namespace, name);
  const rows = await deps.db.segment.findMany({ where: { namespace, targetName: name, name: segment, expired: false } });
  const newest = newestUploads(rows.map(segmentView))[0];
  const row = newest && rows.find((r) => r.key === newest.key);
  if (!row) throw new AppError('not-found', `Segment ${segment} of target ${namespace}/${name} was not found.`);
  if (!row.previewsKey || !row.previewsSha256) {
    const state = previewsState(target);
    const why = row.previewsError
      ? `the mover could not make them: ${row.previewsError}`
      : state.state === 'unavailable'
        ? state.reason
        : state.state === 'off'
          ? `previews are off for target ${namespace}/${name} (spec.previews.enabled)`
          : 'none were captured with it (it was uploaded before previews were on, or by a mover without them)';
    throw new AppError('not-found', `Segment ${segment} of target ${namespace}/${name} has no previews: ${why}.`);
  }
  const policy = await findPolicy(deps.db, deps.resources, namespace, target.spec.policy);
  const store = policy && (await findStore(deps.db, deps.resources, policy.metadata.namespace, policy.spec.store));
  if (!store) throw new AppError('unprocessable', `The store of target ${namespace}/${name} is not configured: the previews of segment ${segment} cannot be read.`);
  const previews = (await readCatalogJson(deps, store, { key: row.previewsKey, sha256: row.previewsSha256 }, MAX_PREVIEWS_BYTES, `The previews of segment ${segment}`)) as { tables: Record<string, unknown> };
  return { segment: row.name, previews: { tables: previews.tables } };
}
