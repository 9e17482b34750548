import { describe, expect, it } from 'vitest';
import type { BackupTargetSpec } from '@sigil/proto/resources';
import { previewsCondition, previewSettings, previewsState } from '../src/change-capture/streams.ts';
import type { StoredResource } from '../src/resources/resources.ts';

/** A target as applied documents give it (defaults of `previews` may be absent from older rows). */
const target = (spec: Record<string, unknown>) =>
  ({ metadata: { namespace: 'default', name: 't', uid: 'u' }, spec: { endpoint: { host: 'db' }, credentials: { secretRef: { name: 'c' } }, policy: 'p', ...spec }, status: {} }) as unknown as StoredResource<BackupTargetSpec>;

describe('what a stream job says about previews', () => {
  it('mysql: on by default with the defaults (5 rows, 64 characters) and the target\'s mask', () => {
    expect(previewSettings(target({ engine: 'mysql', mask: ['email'] }))).toEqual({ rows: 5, maxValueLength: 64, mask: ['email'] });
    expect(previewSettings(target({ engine: 'mysql', previews: { rows: 2, maxValueLength: 10 } }))).toEqual({ rows: 2, maxValueLength: 10, mask: [] });
    expect(previewSettings(target({ engine: 'mysql', previews: { enabled: false } }))).toBeUndefined();
    expect(previewsState(target({ engine: 'mysql' }))).toEqual({ state: 'on' });
    expect(previewsState(target({ engine: 'mysql', previews: { enabled: false } }))).toEqual({ state: 'off' });
  });

  it('postgres: off by default; on with previews.logical (logical decoding), refused without it, naming the setting', () => {
    expect(previewsState(target({ engine: 'postgres' }))).toEqual({ state: 'off' });
    const logical = target({ engine: 'postgres', previews: { logical: true, rows: 2 }, mask: ['^email$'] });
    expect(previewSettings(logical)).toEqual({ rows: 2, maxValueLength: 64, mask: ['^email$'] });
    expect(previewsState(logical)).toEqual({ state: 'on' });
    expect(previewSettings(target({ engine: 'postgres', previews: { logical: true, enabled: false } }))).toBeUndefined();
    const withoutLogical = target({ engine: 'postgres', previews: { enabled: true } });
    expect(previewSettings(withoutLogical)).toBeUndefined();
    const state = previewsState(withoutLogical);
    expect(state).toMatchObject({ state: 'unavailable', code: 'LogicalDecodingOff', reason: expect.stringContaining('previews.logical: true') });
  });

  it('postgres: what the streamer found (wal_level) is the reason, until it reports none', () => {
    const logical = target({ engine: 'postgres', previews: { logical: true } });
    const problem = "wal_level is replica on the server: masked row previews of Postgres need wal_level = logical (ALTER SYSTEM SET wal_level = 'logical'; then restart the server)";
    expect(previewsState(logical, { pitr: { previewsProblem: problem } })).toEqual({ state: 'unavailable', code: 'WalLevelNotLogical', reason: problem });
    expect(previewsState(logical, { pitr: { previewsProblem: 'the publication could not be created' } })).toMatchObject({ code: 'PreviewsUnavailable' });
    expect(previewsState(logical, { pitr: {} })).toEqual({ state: 'on' });
  });

  it('the target\'s Previews condition: True while made, False naming why while asked for and not built, none while off', () => {
    expect(previewsCondition(target({ engine: 'mysql' }), {})).toEqual([{ type: 'Previews', status: 'True', reason: 'PreviewsOn', message: 'masked row previews are made of every segment' }]);
    const [asked] = previewsCondition(target({ engine: 'postgres', previews: { enabled: true } }), {});
    expect(asked).toMatchObject({ type: 'Previews', status: 'False', reason: 'LogicalDecodingOff', message: expect.stringContaining('previews.logical') });
    const [mongo] = previewsCondition(target({ engine: 'mongodb', previews: { enabled: true } }), {});
    expect(mongo).toMatchObject({ status: 'False', reason: 'PreviewsNotBuilt' });
    expect(previewsCondition(target({ engine: 'postgres' }), {})).toEqual([]);
    const before = { conditions: [{ type: 'Previews', status: 'False', reason: 'PreviewsNotBuilt', message: 'x', lastTransitionTime: '2026-01-01T00:00:00Z' }] };
    expect(previewsCondition(target({ engine: 'postgres' }), before)).toEqual([{ type: 'Previews', status: 'True', reason: 'PreviewsOff', message: 'previews are off' }]);
  });
});
