/**
 * The Secrets the workloads read, with placeholder values: `secrets.example.yaml`, a template for the operator (or for
 * an external-secrets tool), never applied as it is. Real values never pass through this repository.
 */
import { Secret } from 'kubernetes-models/v1/Secret';
import type { Overlay } from './overlay.ts';
import { appliesTo, SETTINGS } from './settings/index.ts';
import { WORKLOADS } from './workloads.ts';

/** Secret name → key → the placeholder (a value each service's schema accepts) and who reads it. */
export function secretKeys(overlay: Overlay): Map<string, Map<string, { example: string; readers: string[] }>> {
  const secrets = new Map<string, Map<string, { example: string; readers: string[] }>>();
  for (const workload of WORKLOADS) {
    for (const setting of SETTINGS[workload]) {
      if (setting.source.kind !== 'secret' || !appliesTo(setting, overlay)) continue;
      const keys = secrets.get(setting.source.secret) ?? new Map<string, { example: string; readers: string[] }>();
      secrets.set(setting.source.secret, keys);
      const example = typeof setting.source.example === 'function' ? setting.source.example(overlay) : setting.source.example;
      const entry = keys.get(setting.source.key) ?? { example, readers: [] };
      entry.readers.push(`${workload} ${setting.name}`);
      keys.set(setting.source.key, entry);
    }
  }
  return secrets;
}

export function secretTemplates(overlay: Overlay): Secret[] {
  return [...secretKeys(overlay)].sort(([a], [b]) => a.localeCompare(b)).map(
    ([name, keys]) =>
      new Secret({
        metadata: {
          name,
          namespace: overlay.namespace,
          labels: { 'app.kubernetes.io/part-of': 'sigil' },
          annotations: { 'sigil.dev/read-by': [...keys.values()].flatMap((entry) => entry.readers).join(', ') },
        },
        type: 'Opaque',
        stringData: Object.fromEntries([...keys].map(([key, entry]) => [key, entry.example])),
      }),
  );
}
