export { startLocalIdp, type LocalIdp, type LocalIdpOptions, type SamlResponseOptions } from './server.ts';
export type { LocalIdpUser } from './person.ts';
export { generateLocalIdpKeys, type LocalIdpKeys } from './keys.ts';
