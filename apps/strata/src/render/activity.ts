// Text renderings of the console API objects (docs/strata-api.md, spec part 2.1).
import type { Schema } from '@strata/client';
import type { StrataEvent } from '../events.ts';
import { humanBytes, humanDuration, table, time } from '../format.ts';
import { nsName, targetRef } from './common.ts';
import { restores } from './restores.ts';

export function activity(a: Schema<'Activity'>): string {
  const bs = a.backups ?? [];
  const rs = a.restores ?? [];
  let out = 'Backups:\n';
  out += bs.length
    ? table(
        ['backup', 'target', 'phase', 'created', 'size', 'duration', 'reason'],
        bs.map((b) => [
          nsName(b.namespace, b.name),
          targetRef(b.namespace, b.target),
          b.phase,
          time(b.created),
          humanBytes(b.bytes),
          humanDuration(b.durationSeconds),
          b.reason,
        ]),
      )
    : '  (none)\n';
  out += '\nRestores:\n';
  out += rs.length ? restores({ restores: rs }) : '  (none)\n';
  return out;
}

export function audit(l: Schema<'AuditList'>): string {
  const es = l.events ?? [];
  if (!es.length) return 'No audit events.\n';
  return table(
    ['time', 'user', 'role', 'action', 'target', 'object', 'outcome'],
    es.map((e) => [time(e.time), e.user, e.role, e.action, e.target, e.object, e.outcome]),
  );
}

/** One line per event: `backup default/orders-x Running upload 1.2 MiB: message`. */
export function eventLine(e: StrataEvent, fallbackKind = 'event'): string {
  const parts = [e.kind || fallbackKind, nsName(e.namespace, e.name)];
  if (e.phase) parts.push(e.phase);
  if (e.stage) parts.push(e.stage);
  if (typeof e.bytes === 'number' && e.bytes > 0) parts.push(humanBytes(e.bytes));
  return parts.join(' ') + (e.message ? `: ${e.message}` : '');
}
