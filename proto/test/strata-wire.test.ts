import { describe, expect, it } from 'vitest';
import type { BackupJob, RestoreJob, StreamJob, StrataReport } from '@sigil/proto/strata-jobs';
import { STRATA_JOB_TYPES, STRATA_REPORT_TYPES } from '@sigil/proto/strata-jobs';
import { assertProgressReport, assertStrataJob, assertStrataReport, decodeSealedJob, decodeStrataReport, StrataWireError } from '@sigil/proto/strata-wire';

const store = {
  endpoint: 'http://127.0.0.1:9000',
  region: 'us-east-1',
  bucket: 'backups',
  prefix: 'strata',
  pathStyle: true,
  accessKeyId: 'AKIA',
  secretAccessKey: 'secret',
  disableConditionalPut: false,
  partSizeBytes: 16 * 1024 * 1024,
  concurrency: 4,
};
const database = { engine: 'postgres' as const, host: '127.0.0.1', port: 5432, username: 'postgres', password: '' };

const backupJob: BackupJob = {
  backupId: 'bk_1',
  namespace: 'default',
  name: 'main-20261124',
  target: { namespace: 'default', name: 'main', uid: '5b1c', org: '', project: '', env: '' },
  policy: 'nightly',
  reason: 'manual',
  requestedBy: 'you@example.com',
  database,
  databases: ['*'],
  excludeData: [],
  excludeTables: [],
  store: { ...store, storeName: 'local', ageRecipients: ['age1xyz'], catalogRecipients: [] },
  compression: { algorithm: 'zstd', level: 'default', threads: 0 },
  bandwidthBytesPerSecond: 0,
  stallTimeoutMs: 60_000,
  activeDeadlineMs: 0,
};

const restoreJob: RestoreJob = {
  restoreId: 'rs_1',
  namespace: 'default',
  name: 'main-restore',
  mode: 'new',
  backupId: 'bk_1',
  manifestKey: 'strata/default/main/bk_1/manifest.json',
  store: { ...store, identity: 'AGE-SECRET-KEY-1XYZ' },
  destination: { ...database, database: 'restored' },
  databases: ['app'],
  bandwidthBytesPerSecond: 0,
  stallTimeoutMs: 60_000,
};

const streamJob: StreamJob = {
  streamId: 'st_1',
  namespace: 'default',
  name: 'main',
  targetUid: '5b1c',
  database,
  slot: 'strata_5b1c',
  store: { ...store, ageRecipients: ['age1xyz'] },
  compression: { algorithm: 'zstd', level: 'default', threads: 0 },
  partialIntervalMs: 60_000,
};

const segment = {
  chainID: '7312345678901234567-1',
  timeline: 1,
  name: '000000010000000000000003',
  key: 'strata/default/main/wal/00000001/000000010000000000000003.zst.age',
  startPos: '0/3000000',
  endPos: '0/4000000',
  firstTime: '2026-11-24T09:00:00.000Z',
  lastTime: '2026-11-24T09:00:59.000Z',
  commits: 12,
  sha256: 'a'.repeat(64),
  size: 1000,
  rawSize: 16_777_216,
  partial: false,
  compression: 'zstd' as const,
  uploadedAt: '2026-11-24T09:01:00.000Z',
};

const reports: Record<(typeof STRATA_REPORT_TYPES)[number], StrataReport['data']> = {
  'backup.started': { backupId: 'bk_1', startedAt: '2026-11-24T09:00:00.000Z', jobName: 'mover-1' },
  'backup.succeeded': { backupId: 'bk_1', manifestKey: 'k/manifest.json', manifest: { version: 1 } },
  'backup.failed': { backupId: 'bk_1', message: 'pg_dump: connection refused', finishedAt: '2026-11-24T09:00:00.000Z' },
  'backup.postponed': { backupId: 'bk_1', message: 'a transaction open for 12 s (maxLongTransactionSeconds 5)', exceeded: [{ limit: 'maxLongTransactionSeconds', measured: 12, max: 5 }], measuredAt: '2026-11-24T09:00:00.000Z' },
  'restore.started': { restoreId: 'rs_1', startedAt: '2026-11-24T09:00:00.000Z' },
  'restore.succeeded': { restoreId: 'rs_1', finishedAt: '2026-11-24T09:00:00.000Z', databases: ['restored'], message: 'done' },
  'restore.failed': { restoreId: 'rs_1', message: 'bad', finishedAt: '2026-11-24T09:00:00.000Z' },
  'segment.uploaded': { streamId: 'st_1', namespace: 'default', name: 'main', segment },
  'stream.status': { streamId: 'st_1', namespace: 'default', name: 'main', state: 'streaming', message: 'streaming from 0/3000000', at: '2026-11-24T09:00:00.000Z', coveredUntil: '2026-11-24T09:00:00.000Z', coveredPos: '0/3000100', lagSeconds: 0.2 },
  'audit.recorded': { time: '2026-11-24T09:00:00.000Z', user: 'ops@example.test', role: 'restorer', action: 'getSandboxCredentials', target: 'default/main', object: 'main-sbx-1a2b3c', outcome: 'ok', from: '127.0.0.1', detail: { status: 200 } },
};

const errorsOf = (run: () => void): string[] => {
  try {
    run();
  } catch (error) {
    if (error instanceof StrataWireError) return error.errors;
    throw error;
  }
  return [];
};

describe('Strata jobs on the wire (proto/jobs)', () => {
  it('accepts a job of each type as the catalog builds it', () => {
    expect(STRATA_JOB_TYPES).toEqual(['backup.run', 'restore.run', 'stream.run', 'sandbox.create']);
    expect(errorsOf(() => assertStrataJob('backup.run', backupJob))).toEqual([]);
    expect(errorsOf(() => assertStrataJob('backup.run', { ...backupJob, mode: 'physical' }))).toEqual([]);
    expect(errorsOf(() => assertStrataJob('restore.run', restoreJob))).toEqual([]);
    const segmentObject = { name: segment.name, key: segment.key, sha256: segment.sha256, partial: false, compression: 'zstd' };
    expect(errorsOf(() => assertStrataJob('restore.run', { ...restoreJob, at: '2026-11-24T09:00:30.000Z', segments: [segmentObject] }))).toEqual([]);
    expect(errorsOf(() => assertStrataJob('stream.run', streamJob))).toEqual([]);
    expect(errorsOf(() => assertStrataJob('sandbox.create', { plan: { backupID: 'bk_1' }, sandbox: { namespace: 'default', name: 'main-sbx-1a2b3c' }, owner: 'ops@example.test', orgs: [], projects: [], ttl: '1h' }))).toEqual([]);
    expect(errorsOf(() => assertStrataJob('stream.run', { ...streamJob, slot: 'Bad-Slot', partialIntervalMs: 10 }))).toEqual([
      expect.stringMatching(/^\/slot must match pattern/),
      expect.stringMatching(/^\/partialIntervalMs must be >= 1000/),
    ]);
  });

  it('names every problem of a job: a missing field, a wrong type, an unknown field, a field of the wrong job', () => {
    const { stallTimeoutMs: _dropped, ...missing } = backupJob;
    expect(errorsOf(() => assertStrataJob('backup.run', missing))).toEqual([expect.stringMatching(/stallTimeoutMs/)]);
    expect(errorsOf(() => assertStrataJob('backup.run', { ...backupJob, database: { ...database, port: 'five' } }))).toEqual([
      expect.stringMatching(/^\/database\/port must be integer/),
    ]);
    expect(errorsOf(() => assertStrataJob('backup.run', { ...backupJob, store: { ...backupJob.store, sessionToken: 'x' } })).join()).toMatch(/\/store/);
    expect(errorsOf(() => assertStrataJob('restore.run', backupJob)).length).toBeGreaterThan(1);
    expect(errorsOf(() => assertStrataJob('restore.run', { ...restoreJob, mode: 'sideways', databases: [''] }))).toEqual([
      expect.stringMatching(/^\/mode /),
      expect.stringMatching(/^\/databases\/0 must NOT have fewer than 1 characters/),
    ]);
  });

  it('checks the sealed envelope a job travels in', () => {
    const sealed = { id: 'bk_1.1', type: 'restore.run', sealed: 'aGVsbG8' };
    expect(decodeSealedJob(sealed)).toEqual(sealed);
    expect(errorsOf(() => decodeSealedJob({ ...sealed, type: 'sandbox.run', job: restoreJob }))).toEqual([
      '/ must NOT have additional properties (job)',
      '/type must be equal to one of the allowed values',
    ]);
    expect(errorsOf(() => decodeSealedJob({ id: '', type: 'backup.run' }))).toEqual([
      "/ must have required property 'sealed'",
      '/id must NOT have fewer than 1 characters',
    ]);
  });

  it('refuses a job type it does not know', () => {
    expect(() => assertStrataJob('sandbox.run' as 'backup.run', backupJob)).toThrow(/unknown job type/);
  });
});

describe('Strata reports on the wire (proto/jobs)', () => {
  it.each(STRATA_REPORT_TYPES)('decodes a valid %s report', (type) => {
    const report = { id: 'r1', type, occurredAt: '2026-11-24T09:00:00.000Z', data: reports[type] } as StrataReport;
    expect(decodeStrataReport(report)).toEqual(report);
    expect(() => assertStrataReport(report)).not.toThrow();
  });

  it.each(STRATA_REPORT_TYPES)('refuses a %s report whose data does not name its run', (type) => {
    const [runKey, ...rest] = Object.keys(reports[type]);
    const data = Object.fromEntries(Object.entries(reports[type]).filter(([key]) => key !== runKey));
    expect(rest.length).toBeGreaterThan(0);
    expect(errorsOf(() => decodeStrataReport({ id: 'r1', type, occurredAt: '2026-11-24T09:00:00.000Z', data }))).toEqual([
      `/data must have required property '${runKey}'`,
    ]);
  });

  it('refuses an unknown type, a bad time, and data of another report type', () => {
    const base = { id: 'r1', occurredAt: '2026-11-24T09:00:00.000Z' };
    expect(() => decodeStrataReport({ ...base, type: 'backup.exploded', data: {} })).toThrow(/\/type must be equal to one of the allowed values/);
    expect(() => decodeStrataReport({ ...base, type: 'backup.failed', occurredAt: 'yesterday', data: reports['backup.failed'] })).toThrow(/occurredAt/);
    expect(() => decodeStrataReport({ ...base, type: 'backup.failed', data: reports['restore.started'] })).toThrow(/\/data/);
    expect(() => decodeStrataReport(null)).toThrow(StrataWireError);
  });

  it('checks progress reports', () => {
    const progress = { kind: 'backup', id: 'bk_1', namespace: 'default', name: 'main', progress: { stage: 'dump', bytes: 10, totalBytes: 0, updatedAt: '2026-11-24T09:00:00.000Z' } };
    expect(() => assertProgressReport(progress)).not.toThrow();
    expect(() => assertProgressReport({ ...progress, progress: { ...progress.progress, bytes: -1 } })).toThrow(/bytes must be >= 0/);
  });
});
