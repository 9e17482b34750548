/**
 * The configuration against each service's own schema (its `src/config.ts`, as `loadConfig` checks it at boot): the
 * environment a pod starts with — its ConfigMap, its Secrets' keys (their placeholders), the Downward API — passes,
 * and every variable the schema knows is documented in settings/, and nothing else.
 */
import { describe, expect, it } from 'vitest';
import { SETTINGS } from '../src/settings/index.ts';
import { WORKLOADS, type Workload } from '../src/workloads.ts';
import { configSchemaOf, named, overlayNames, rendered, resolveEnv, type ConfigSchema } from './rendered-objects.ts';

const problems = (schema: ConfigSchema, env: Record<string, string>) => {
  const result = schema.safeParse(env);
  return result.success ? [] : (result.error?.issues ?? []).map((issue) => `${issue.path.join('.')}: ${issue.message}`);
};

describe.each(WORKLOADS)('%s', (workload: Workload) => {
  it('documents every variable its config schema reads, and documents no other (runtime ones aside)', async () => {
    const { keys } = await configSchemaOf(workload);
    const documented = SETTINGS[workload].filter((setting) => !setting.runtime).map((setting) => setting.name);
    expect([...documented].sort()).toEqual([...keys].sort());
    expect(new Set(documented).size).toBe(documented.length);
  });

  for (const name of overlayNames) {
    it(`${name}: starts with an environment its schema accepts`, async () => {
      const { schema } = await configSchemaOf(workload);
      const deployment = named(rendered[name], 'Deployment', workload);
      expect(problems(schema, resolveEnv(rendered[name], deployment!))).toEqual([]);
    });
  }
});

describe('the check fails when a required setting is missing', () => {
  it('billing without DATABASE_URL, evidence without its sealing identity, the controller without POD_NAME', async () => {
    const render = rendered.production;
    const cases: Array<[Workload, string, RegExp]> = [
      ['billing', 'DATABASE_URL', /DATABASE_URL/],
      ['evidence', 'SEAL_CERT_PEM', /SEAL_KEY_PEM: set SEAL_KEY_PEM and SEAL_CERT_PEM/],
      ['strata-controller', 'POD_NAME', /POD_NAME/],
      ['gateway', 'SERVICE_URLS', /SERVICE_URLS/],
    ];
    for (const [workload, variable, expected] of cases) {
      const deployment = structuredClone(named(render, 'Deployment', workload));
      const container = deployment!.spec.template.spec.containers[0];
      container.env = container.env.filter((entry: { name: string }) => entry.name !== variable);
      const env = resolveEnv(render, deployment!);
      delete env[variable];
      const { schema } = await configSchemaOf(workload);
      expect(problems(schema, env).join('\n'), `${workload} without ${variable}`).toMatch(expected);
    }
  });
});
