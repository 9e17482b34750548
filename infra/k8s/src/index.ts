/** @sigil/k8s: the platform's Kubernetes manifests as typed objects, rendered per overlay. */
export { localOverlay, OVERLAYS, productionOverlay } from './overlay.ts';
export type { Overlay, OverlayName } from './overlay.ts';
export { crdObjects, plain, renderOverlay, renderYamlFiles, toYaml } from './render.ts';
export type { KubeObject, RenderedFile } from './render.ts';
export { SETTINGS } from './settings/index.ts';
export { WORKLOAD_SPECS, WORKLOADS } from './workloads.ts';
