/** What tests outside the catalog (integration, e2e) use of its test harness: `@strata/backup-catalog/testing`. */
export { startCatalogHarness, generateAgeIdentity, type CatalogHarness } from './helpers.ts';
export { s3Env, stackDocuments, type StackDocsOptions } from './fixtures.ts';
