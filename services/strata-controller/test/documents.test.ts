import { describe, expect, it } from 'vitest';
import { canonical, catalogDocument, failedStatus, statusFromCatalog, type CustomResource } from '../src/documents.ts';
import { backoffDelay } from '../src/work-queue.ts';

const target: CustomResource = {
  apiVersion: 'backups.strata.dev/v1alpha1',
  kind: 'BackupTarget',
  metadata: {
    name: 'orders',
    namespace: 'shop',
    uid: 'b0c1',
    generation: 3,
    resourceVersion: '812',
    creationTimestamp: '2026-11-29T00:00:00Z',
    finalizers: ['backups.strata.dev/catalog'],
    managedFields: [{ manager: 'kubectl' }],
    labels: { team: 'shop' },
    annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"huge":true}', note: 'kept' },
  },
  spec: { engine: 'postgres', policy: 'nightly' },
  status: { phase: 'Ready', observedGeneration: 2 },
};

describe('the document applied to the catalog', () => {
  it('is what kubectl sent: no server fields, no status, no last-applied copy', () => {
    expect(catalogDocument(target)).toEqual({
      apiVersion: 'backups.strata.dev/v1alpha1',
      kind: 'BackupTarget',
      metadata: { name: 'orders', namespace: 'shop', labels: { team: 'shop' }, annotations: { note: 'kept' } },
      spec: { engine: 'postgres', policy: 'nightly' },
    });
  });
});

describe('the status written from the catalog', () => {
  const fromCatalog = (observed: number) => ({
    apiVersion: 'backups.strata.dev/v1alpha1',
    kind: 'BackupTarget',
    metadata: { name: 'orders', namespace: 'shop', generation: 7 },
    status: {
      phase: 'Ready',
      message: '',
      observedGeneration: observed,
      lastSuccessTime: '2026-11-29T03:00:00Z',
      conditions: [
        { type: 'Ready', status: 'True' as const, reason: 'Ready', message: 'connected', observedGeneration: observed },
        { type: 'LastBackupSucceeded', status: 'True' as const, reason: 'BackupSucceeded', message: 'ok', observedGeneration: 5 },
      ],
    },
  });

  it("carries the catalog's fields and conditions in the cluster's generation numbering", () => {
    const status = statusFromCatalog(fromCatalog(7), 3);
    expect(status).toMatchObject({ phase: 'Ready', observedGeneration: 3, lastSuccessTime: '2026-11-29T03:00:00Z' });
    expect(status?.conditions?.[0]).toMatchObject({ type: 'Ready', status: 'True', observedGeneration: 3 });
    // Computed for an older catalog generation: no cluster generation to name.
    expect(status?.conditions?.[1]).not.toHaveProperty('observedGeneration');
  });

  it('is not taken while the catalog has not checked its newest generation', () => {
    expect(statusFromCatalog(fromCatalog(6), 3)).toBeUndefined();
  });

  it('says why a generation failed, keeping the transition time of an unchanged condition', () => {
    const first = failedStatus(undefined, 4, 'Unprocessable', 'spec.policy: no such policy', new Date('2026-11-29T04:00:00Z'));
    expect(first).toMatchObject({ phase: 'NotReady', observedGeneration: 4, conditions: [{ type: 'Ready', status: 'False', reason: 'Unprocessable', observedGeneration: 4, lastTransitionTime: '2026-11-29T04:00:00.000Z' }] });
    const again = failedStatus(first, 4, 'Unprocessable', 'still', new Date('2026-11-29T04:05:00Z'));
    expect(again.conditions?.[0]?.lastTransitionTime).toBe('2026-11-29T04:00:00.000Z');
    expect(canonical({ b: 1, a: { d: 1, c: 2 } })).toBe(canonical({ a: { c: 2, d: 1 }, b: 1 }));
  });
});

describe('back-off', () => {
  it('doubles per failure up to the cap, jittered between half and all of it', () => {
    const options = { baseMs: 100, maxMs: 1000 };
    expect([1, 2, 3, 4, 5, 10].map((n) => backoffDelay(n, options, () => 1))).toEqual([100, 200, 400, 800, 1000, 1000]);
    expect([1, 2, 5].map((n) => backoffDelay(n, options, () => 0))).toEqual([50, 100, 500]);
  });
});
