/** Test helpers: both overlays rendered once, objects by kind, and a container's environment resolved as the kubelet would. */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { OVERLAYS, type Overlay, type OverlayName } from '../src/overlay.ts';
import { plain, renderOverlay, type KubeObject } from '../src/render.ts';
import { secretTemplates } from '../src/secrets.ts';
import type { Workload } from '../src/workloads.ts';

export type Plain = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- walking rendered JSON

export interface Rendered {
  overlay: Overlay;
  objects: KubeObject[];
  /** The objects as kubectl would send them. */
  json: Plain[];
  secrets: Plain[];
}

export const rendered: Record<OverlayName, Rendered> = Object.fromEntries(
  (Object.keys(OVERLAYS) as OverlayName[]).map((name) => {
    const overlay = OVERLAYS[name];
    const objects = renderOverlay(overlay).flatMap((file) => file.objects);
    return [name, { overlay, objects, json: objects.map(plain), secrets: secretTemplates(overlay).map(plain) }];
  }),
) as Record<OverlayName, Rendered>;

export const overlayNames = Object.keys(OVERLAYS) as OverlayName[];

export const ofKind = (render: Rendered, kind: string) => render.json.filter((object) => object.kind === kind);
export const named = (render: Rendered, kind: string, name: string) => ofKind(render, kind).find((object) => object.metadata.name === name);

/** A label selector's `matchLabels` matches a set of labels. */
export const selects = (matchLabels: Record<string, string>, labels: Record<string, string> = {}) =>
  Object.keys(matchLabels).length > 0 && Object.entries(matchLabels).every(([key, value]) => labels[key] === value);

/** The environment a Deployment's first container starts with: envFrom ConfigMaps, then env (secrets, fields, values). */
export function resolveEnv(render: Rendered, deployment: Plain, fields: Record<string, string> = { 'metadata.name': 'pod-0', 'metadata.namespace': render.overlay.namespace }): Record<string, string> {
  const container = deployment.spec.template.spec.containers[0];
  const env: Record<string, string> = {};
  for (const from of container.envFrom ?? []) {
    const configMap = named(render, 'ConfigMap', from.configMapRef.name);
    if (!configMap) throw new Error(`${deployment.metadata.name}: ConfigMap ${from.configMapRef.name} is not rendered`);
    Object.assign(env, configMap.data);
  }
  for (const variable of container.env ?? []) {
    if (variable.value !== undefined) env[variable.name] = variable.value;
    else if (variable.valueFrom?.secretKeyRef) {
      const { name, key, optional } = variable.valueFrom.secretKeyRef;
      const value = render.secrets.find((secret) => secret.metadata.name === name)?.stringData?.[key];
      if (value === undefined && !optional) throw new Error(`${deployment.metadata.name}: Secret ${name} key ${key} is not in the secrets template`);
      if (value !== undefined) env[variable.name] = value;
    } else if (variable.valueFrom?.fieldRef) {
      const value = fields[variable.valueFrom.fieldRef.fieldPath];
      if (value === undefined) throw new Error(`${deployment.metadata.name}: no value for field ${variable.valueFrom.fieldRef.fieldPath}`);
      env[variable.name] = value;
    }
  }
  return env;
}

const repoRoot = path.resolve(import.meta.dirname, '../../..');

/** Each workload's own config schema (its `src/config.ts`), the source of truth for what it requires. */
const CONFIG_MODULES: Record<Workload, { file: string; exportName: string }> = {
  gateway: { file: 'gateway/src/config.ts', exportName: 'gatewayConfigSchema' },
  accounts: { file: 'services/accounts/src/config.ts', exportName: 'accountsConfig' },
  billing: { file: 'services/billing/src/config.ts', exportName: 'billingConfig' },
  templates: { file: 'services/templates/src/config.ts', exportName: 'templatesConfig' },
  envelopes: { file: 'services/envelopes/src/config.ts', exportName: 'envelopesConfig' },
  signing: { file: 'services/signing/src/config.ts', exportName: 'signingConfig' },
  evidence: { file: 'services/evidence/src/config.ts', exportName: 'evidenceConfig' },
  webhooks: { file: 'services/webhooks/src/config.ts', exportName: 'webhooksConfig' },
  'backup-catalog': { file: 'services/backup-catalog/src/config.ts', exportName: 'catalogConfig' },
  mover: { file: 'services/mover/src/config.ts', exportName: 'moverConfig' },
  sandbox: { file: 'services/sandbox/src/config.ts', exportName: 'sandboxConfig' },
  'strata-controller': { file: 'services/strata-controller/src/config.ts', exportName: 'controllerConfigSchema' },
};

export interface ConfigSchema {
  safeParse(env: Record<string, string>): { success: boolean; error?: { issues: Array<{ path: Array<string | number>; message: string }> } };
}

/**
 * Loaded by file path at test time: the manifests package never imports a service (the lint boundary); only this
 * check reads the services' schemas, so that what they require and what the manifests set cannot drift apart.
 */
export async function configSchemaOf(workload: Workload): Promise<{ schema: ConfigSchema; keys: string[] }> {
  const { file, exportName } = CONFIG_MODULES[workload];
  const module = (await import(pathToFileURL(path.join(repoRoot, file)).href)) as Record<string, ConfigSchema>;
  const schema = module[exportName];
  if (!schema) throw new Error(`${file} exports no ${exportName}`);
  return { schema, keys: Object.keys(shapeOf(schema)) };
}

/** The object shape under zod's refinements and effects (`.refine`, `.superRefine`). */
function shapeOf(schema: unknown): Record<string, unknown> {
  let current = schema as { shape?: Record<string, unknown>; _def?: { schema?: unknown } };
  for (let depth = 0; depth < 5 && !current.shape; depth += 1) current = current._def?.schema as typeof current;
  if (!current.shape) throw new Error('not a zod object schema');
  return current.shape;
}
