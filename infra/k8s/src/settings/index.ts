/** Every setting of every workload, in one place: the ConfigMaps, the Secrets' keys and docs/kubernetes.md come from here. */
import type { Workload } from '../workloads.ts';
import type { Setting } from './shared.ts';
import { accountsSettings, billingSettings, envelopesSettings, evidenceSettings, signingSettings, templatesSettings, webhooksSettings } from './sigil.ts';
import { catalogSettings, controllerSettings, gatewaySettings, moverSettings, sandboxSettings } from './strata.ts';

export type { Setting, SettingSource } from './shared.ts';
export { appliesTo, databaseSecretOf, SECRETS } from './shared.ts';

export const SETTINGS: Record<Workload, Setting[]> = {
  gateway: gatewaySettings,
  accounts: accountsSettings,
  billing: billingSettings,
  templates: templatesSettings,
  envelopes: envelopesSettings,
  signing: signingSettings,
  evidence: evidenceSettings,
  webhooks: webhooksSettings,
  'backup-catalog': catalogSettings,
  mover: moverSettings,
  sandbox: sandboxSettings,
  'strata-controller': controllerSettings,
};

/** The ConfigMap holding a workload's plain settings. */
export const configMapOf = (workload: Workload) => `${workload}-config`;
