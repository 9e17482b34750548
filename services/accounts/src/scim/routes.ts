/** SCIM in the accounts app: the three dashboard operations (`/v1/scim`, `/v1/scim/token`) and the `/scim/v2` protocol. */
import type { Express } from 'express';
import type { OperationHandler } from '@sigil/kit/api';
import type { EntitlementsCache } from '@sigil/kit/entitlements';
import { clientAddress } from '@sigil/kit/http';
import type { Logger } from '@sigil/kit/log';
import type { Db } from '../db.ts';
import { createScimRouter, SCIM_BASE_PATH } from './protocol.ts';
import { createScimTokenService } from './tokens.ts';

/** The token is a credential: never cached. */
const NO_STORE = { 'cache-control': 'no-store' };

export function createScimRoutes(deps: { db: Db; clock: () => Date; log: Logger; entitlements: EntitlementsCache; publicUrl: string }) {
  const tokens = createScimTokenService(deps);
  const handlers: { getScim: OperationHandler<'getScim'>; createScimToken: OperationHandler<'createScimToken'>; revokeScimToken: OperationHandler<'revokeScimToken'> } = {
    getScim: async ({ principal }) => ({ status: 200, body: await tokens.state(principal.organizationId), headers: NO_STORE }),
    createScimToken: async ({ principal, req }) => ({ status: 201, body: await tokens.create(principal, clientAddress(req)), headers: NO_STORE }),
    revokeScimToken: async ({ principal, req }) => {
      await tokens.revoke(principal, clientAddress(req));
      return { status: 204 };
    },
  };
  return {
    tokens,
    handlers,
    mount: (app: Express) => void app.use(SCIM_BASE_PATH, createScimRouter({ ...deps, tokens })),
  };
}
