/**
 * Transitional names for services not yet moved to `createSigilApp` / `createStrataApp` (issue 7): they load the
 * product's document on the service's behalf. Deleted once every service passes its document itself.
 */
import type { Express } from 'express';
import { loadSigilOpenApi, loadStrataOpenApi } from '@sigil/proto';
import { createSigilApp, type SigilAppOptions } from './sigil-app.ts';
import { createStrataApp, type StrataAppOptions } from './strata-app.ts';

export type ServiceAppOptions = Omit<SigilAppOptions, 'document'>;
export type ConsoleAppOptions = Omit<StrataAppOptions, 'document'>;

export function createServiceApp(options: ServiceAppOptions): Promise<Express> {
  return createSigilApp({ ...options, document: loadSigilOpenApi() });
}

export function createConsoleApp(options: ConsoleAppOptions): Promise<Express> {
  return createStrataApp({ ...options, document: loadStrataOpenApi() });
}
