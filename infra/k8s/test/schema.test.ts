/**
 * Every rendered object against the Kubernetes API's OpenAPI schemas as kubernetes-models 5.1.0 compiles them (from
 * Kubernetes v1.36.0, merged with the schemas of older releases for removed APIs), the CRDs against the
 * apiextensions.k8s.io/v1 CustomResourceDefinition schema, and proof that the validator rejects broken objects.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { CustomResourceDefinition } from 'kubernetes-models/apiextensions.k8s.io/v1/CustomResourceDefinition';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { crdObjects } from '../src/render.ts';
import { named, overlayNames, rendered, type Plain } from './rendered-objects.ts';

/**
 * Group versions Kubernetes 1.36 serves for what is rendered here. kubernetes-models keeps the schemas of removed APIs
 * too (policy/v1beta1, autoscaling/v2beta2, ...): an object of such a version would validate and still be refused.
 */
const SERVED_IN_1_36 = new Set(['v1', 'apps/v1', 'batch/v1', 'policy/v1', 'autoscaling/v2', 'networking.k8s.io/v1', 'rbac.authorization.k8s.io/v1', 'apiextensions.k8s.io/v1']);

const validationError = (validate: () => void): string | undefined => {
  try {
    validate();
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
};

describe('schema validation (kubernetes-models 5.1.0: Kubernetes v1.36.0)', () => {
  it('uses kubernetes-models 5.1.x', () => {
    const require = createRequire(import.meta.url);
    const manifest = JSON.parse(readFileSync(require.resolve('kubernetes-models/package.json'), 'utf8')) as { version: string };
    expect(manifest.version).toMatch(/^5\.1\./);
  });

  for (const name of overlayNames) {
    it(`${name}: every object validates against its schema`, () => {
      const failures = rendered[name].objects.flatMap((object) => {
        const message = validationError(() => object.validate());
        return message ? [`${object.kind}/${object.metadata?.name}: ${message}`] : [];
      });
      expect(failures).toEqual([]);
      expect(rendered[name].objects.length).toBeGreaterThan(80);
    });

    it(`${name}: every object is of a group version Kubernetes 1.36 serves`, () => {
      const versions = new Set(rendered[name].objects.map((object) => object.apiVersion));
      expect([...versions].filter((version) => !SERVED_IN_1_36.has(version))).toEqual([]);
    });

    it(`${name}: object names are unique per kind and namespace`, () => {
      const keys = rendered[name].json.map((object) => `${object.kind}/${object.metadata.namespace ?? ''}/${object.metadata.name}`);
      expect(keys.filter((key, index) => keys.indexOf(key) !== index)).toEqual([]);
    });
  }

  it('the six CRDs validate as apiextensions.k8s.io/v1 and name their plural and group', () => {
    const crds = crdObjects();
    expect(crds.map((crd) => crd.spec?.names.kind).sort()).toEqual(['Backup', 'BackupPolicy', 'BackupStore', 'BackupTarget', 'Restore', 'Sandbox']);
    for (const crd of crds) {
      expect(validationError(() => crd.validate())).toBeUndefined();
      expect(crd.metadata?.name).toBe(`${crd.spec?.names.plural}.${crd.spec?.group}`);
      for (const version of crd.spec?.versions ?? []) expect(version.schema?.openAPIV3Schema?.type).toBe('object');
    }
  });
});

describe('the validator rejects broken objects', () => {
  const deployment = () => structuredClone(named(rendered.production, 'Deployment', 'billing')) as Plain;

  it('a field of the wrong type', () => {
    const broken = deployment();
    broken.spec.replicas = 'two';
    expect(validationError(() => new Deployment(broken).validate())).toMatch(/replicas must be integer/);
  });

  it('a missing required field', () => {
    const broken = deployment();
    delete broken.spec.template.spec.containers[0].name;
    expect(validationError(() => new Deployment(broken).validate())).toMatch(/must have required property name/);
  });

  it('a quantity that is not one', () => {
    const broken = deployment();
    broken.spec.template.spec.containers[0].resources.limits.memory = '256 MB';
    expect(validationError(() => new Deployment(broken).validate())).toMatch(/format "quantity"/);
  });

  it('a NetworkPolicy port of the wrong type', () => {
    const broken = structuredClone(named(rendered.production, 'NetworkPolicy', 'billing')) as Plain;
    broken.spec.ingress[0].ports[0].port = { number: 8080 };
    expect(validationError(() => new NetworkPolicy(broken).validate())).toBeDefined();
  });

  it('a CRD whose version is not a boolean where one is needed', () => {
    const crd = structuredClone(JSON.parse(JSON.stringify(crdObjects()[0])));
    crd.spec.versions[0].served = 'yes';
    expect(validationError(() => new CustomResourceDefinition(crd).validate())).toMatch(/served must be boolean/);
  });

  it('an unknown field is a type error, not a schema error (the schemas allow extra members; tsc catches them)', () => {
    const objects = [
      // @ts-expect-error -- `replica` is not a DeploymentSpec member: the typecheck fails here if this line compiles.
      new Deployment({ metadata: { name: 'x' }, spec: { replica: 2, selector: { matchLabels: { a: 'b' } }, template: { spec: { containers: [{ name: 'x', image: 'x' }] } } } }),
    ];
    expect(validationError(() => objects[0]?.validate())).toBeUndefined();
  });
});
