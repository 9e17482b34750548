export { createController, type Controller, type ControllerOptions } from './controller.ts';
export { createCatalog, CatalogError, type Catalog } from './catalog.ts';
export { controllerConfigSchema, loadControllerConfig, type ControllerConfig } from './config.ts';
export { startHealthServer } from './health.ts';
export { FINALIZER, KINDS, GROUP, VERSION } from './kinds.ts';
