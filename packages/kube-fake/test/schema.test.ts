import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { Json } from './helpers.ts';
import { fakeForEachTest, GROUP, rejection, targetSpec, targetsPath, VERSION } from './helpers.ts';

const start = fakeForEachTest();
const body = (name: string, spec: object) => ({ apiVersion: `${GROUP}/${VERSION}`, kind: 'BackupTarget', metadata: { name }, spec });
const setup = async () => ({ ...(await start()), body });

const causesOf = (status: Json) => (status.details.causes as Array<{ reason: string; message: string; field: string }>).map((c) => `${c.field} ${c.reason}: ${c.message}`).sort();

describe('kube-fake: custom resources against their CRD schema', () => {
  it('prunes fields the schema does not name and fills in its defaults, as the API server stores them', async () => {
    const { fake, custom, target, body } = await setup();
    const created = await custom.createNamespacedCustomObject({ ...target, body: { ...body('main', targetSpec({ retention: 3, endpoint: { host: 'db.example', tls: true } })), extra: 1 } });
    expect(created.extra).toBeUndefined();
    expect(created.spec.retention).toBeUndefined();
    expect(created.spec.endpoint).toEqual({ host: 'db.example' });
    // Defaults, top down: an object defaulted to {} gets its own properties' defaults.
    expect(created.spec).toMatchObject({ databases: ['*'], credentials: { secretRef: { name: 'db', usernameKey: 'username', passwordKey: 'password' } } });
    expect(created.spec.previews).toMatchObject({ rows: 5, logical: false });
    expect(fake.get(`${targetsPath}/main`)).toEqual(created);
    // Status writes are pruned too.
    const withStatus = await custom.patchNamespacedCustomObjectStatus({ ...target, name: 'main', body: { status: { phase: 'Ready', invented: 'x' } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
    expect(withStatus.status).toEqual({ phase: 'Ready' });
  });

  it('answers 422 Invalid with one cause per field for a body the schema refuses', async () => {
    const { custom, target, body } = await setup();
    const { policy: _policy, ...withoutPolicy } = targetSpec({ engine: 'oracle', endpoint: { host: 'db.example', port: 'five' } });
    const status = await rejection(custom.createNamespacedCustomObject({ ...target, body: body('bad', withoutPolicy) }));
    expect(status).toMatchObject({ kind: 'Status', code: 422, reason: 'Invalid', details: { name: 'bad', group: GROUP, kind: 'BackupTarget' } });
    expect(status.message).toMatch(/^BackupTarget\.backups\.strata\.dev "bad" is invalid: \[/);
    expect(causesOf(status)).toEqual([
      'spec.endpoint.port FieldValueTypeInvalid: Invalid value: "string": spec.endpoint.port in body must be of type integer: "string"',
      'spec.engine FieldValueNotSupported: Unsupported value: "oracle": supported values: "postgres", "mysql", "mongodb"',
      'spec.policy FieldValueRequired: Required value',
    ]);
  });

  it('validates status writes: an enum, a minimum, a date-time, list types', async () => {
    const { custom, target, body } = await setup();
    const created = await custom.createNamespacedCustomObject({ ...target, body: body('main', targetSpec()) });
    const status = await rejection(custom.replaceNamespacedCustomObjectStatus({
      ...target, name: 'main',
      body: { ...created, status: { observedGeneration: -1, conditions: [{ type: 'Ready', status: 'Maybe', lastTransitionTime: 'yesterday' }] } },
    }));
    expect(status).toMatchObject({ code: 422, reason: 'Invalid' });
    expect(causesOf(status)).toEqual([
      'status.conditions[0].lastTransitionTime FieldValueInvalid: Invalid value: "yesterday": status.conditions[0].lastTransitionTime in body must be of type date-time: "yesterday"',
      'status.conditions[0].status FieldValueNotSupported: Unsupported value: "Maybe": supported values: "True", "False", "Unknown"',
      'status.observedGeneration FieldValueInvalid: Invalid value: -1: status.observedGeneration in body should be greater than or equal to 0',
    ]);
    // conditions is a map-type list keyed by type; mask a set.
    const duplicate = await rejection(custom.replaceNamespacedCustomObjectStatus({ ...target, name: 'main', body: { ...created, status: { conditions: [{ type: 'Ready', status: 'True' }, { type: 'Ready', status: 'False' }] } } }));
    expect(causesOf(duplicate)).toEqual(['status.conditions[1] FieldValueDuplicate: Duplicate value: map[string]interface {}{"type":"Ready"}']);
    const duplicateMask = await rejection(custom.replaceNamespacedCustomObject({ ...target, name: 'main', body: { ...created, spec: { ...created.spec, mask: ['a', 'a'] } } }));
    expect(causesOf(duplicateMask)).toEqual(['spec.mask[1] FieldValueDuplicate: Duplicate value: "a"']);
    const ok = await custom.replaceNamespacedCustomObjectStatus({ ...target, name: 'main', body: { ...created, status: { observedGeneration: 1, conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: new Date().toISOString(), reason: 'Applied', message: '' }] } } });
    expect(ok.status.conditions[0].status).toBe('True');
  });
});
