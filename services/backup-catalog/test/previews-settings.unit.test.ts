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

  it('postgres: off by default; asked for, they are not built yet and the answer says so (no job settings)', () => {
    expect(previewsState(target({ engine: 'postgres' }))).toEqual({ state: 'off' });
    const asked = target({ engine: 'postgres', previews: { enabled: true, logical: true } });
    expect(previewSettings(asked)).toBeUndefined();
    const state = previewsState(asked);
    expect(state.state).toBe('unavailable');
    expect(state.state === 'unavailable' && state.reason).toContain('Postgres previews are not built yet');
    expect(state.state === 'unavailable' && state.reason).toContain('previews.logical');
  });

  it('the target\'s Previews condition: True while made, False naming why while asked for and not built, none while off', () => {
    expect(previewsCondition(target({ engine: 'mysql' }), {})).toEqual([{ type: 'Previews', status: 'True', reason: 'PreviewsOn', message: 'masked row previews are made of every segment' }]);
    const [asked] = previewsCondition(target({ engine: 'postgres', previews: { enabled: true } }), {});
    expect(asked).toMatchObject({ type: 'Previews', status: 'False', reason: 'PreviewsNotBuilt', message: expect.stringContaining('Postgres previews are not built yet') });
    expect(previewsCondition(target({ engine: 'postgres' }), {})).toEqual([]);
    const before = { conditions: [{ type: 'Previews', status: 'False', reason: 'PreviewsNotBuilt', message: 'x', lastTransitionTime: '2026-01-01T00:00:00Z' }] };
    expect(previewsCondition(target({ engine: 'postgres' }), before)).toEqual([{ type: 'Previews', status: 'True', reason: 'PreviewsOff', message: 'previews are off' }]);
  });
});
