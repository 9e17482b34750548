import type { Express } from 'express';
import { createStrataApp, type WriteRecord } from '@sigil/kit/api/strata';
import { mountStrataSubgraph } from '@sigil/kit/graphql';
import { mountHealth, type Health, type ReadinessCheck } from '@sigil/kit/http';
import type { Logger } from '@sigil/kit/log';
import type { StrataPrincipalVerifier } from '@sigil/kit/auth';
import { loadStrataOpenApi } from '@sigil/proto/strata-openapi';
import { recordAudit } from './audit.ts';
import type { Db } from './db.ts';
import { renderTextTable } from './query/index.ts';
import { createSandboxQueries } from './sandbox-queries.ts';
import { createSandboxService, type SandboxDeps, type SandboxService } from './sandboxes.ts';
import { createResolvers, typeDefs } from './subgraph.ts';

export interface SandboxAppDeps extends SandboxDeps {
  db: Db;
  log: Logger;
  verifyPrincipal: StrataPrincipalVerifier;
  queryTimeoutMs: number;
  readiness?: Record<string, ReadinessCheck>;
}

/** The sandbox operations of the console API (`/api/v1/sandboxes*`): thin handlers over the use cases. */
export async function createApp(deps: SandboxAppDeps): Promise<{ app: Express; health: Health; sandboxes: SandboxService }> {
  const sandboxes = createSandboxService(deps);
  const queries = createSandboxQueries({ sandboxes, secretsKey: deps.secretsKey, timeoutMs: deps.queryTimeoutMs });
  let health: Health | undefined;
  const app = await createStrataApp({
    document: loadStrataOpenApi(),
    service: 'sandbox',
    log: deps.log,
    verifyPrincipal: deps.verifyPrincipal,
    recordWrite: (record: WriteRecord) => recordAudit(deps.db, deps.cell, record),
    mount: async (app) => {
      health = mountHealth(app, { database: async () => void (await deps.db.$queryRawUnsafe('SELECT 1')), ...deps.readiness });
      await mountStrataSubgraph(app, { typeDefs, resolvers: createResolvers(sandboxes), verifyStrataPrincipal: deps.verifyPrincipal, log: deps.log });
    },
    handlers: {
      listSandboxes: async () => ok({ sandboxes: await sandboxes.list() }),
      createSandbox: async ({ principal, body, setAuditObject }) => {
        const action = await sandboxes.create(principal, body);
        setAuditObject(action.name);
        return { status: 202, body: action };
      },
      getSandbox: async ({ params }) => ok({ sandbox: await sandboxes.get(params.name) }),
      deleteSandbox: async ({ params, setAuditObject }) => {
        setAuditObject(params.name);
        return ok(await sandboxes.remove(params.name));
      },
      extendSandbox: async ({ principal, params, body, setAuditObject }) => {
        setAuditObject(params.name, { by: body.by });
        return ok(await sandboxes.extend(params.name, body, principal));
      },
      resetSandbox: async ({ principal, params, body, setAuditObject }) => {
        setAuditObject(params.name);
        return { status: 202, body: await sandboxes.reset(params.name, principal, body?.reason) };
      },
      getSandboxCredentials: async ({ principal, params, from }) => ok(await sandboxes.credentials(params.name, principal, from)),
      querySandbox: async ({ params, body, req, setAuditObject }) => {
        setAuditObject(params.name);
        const result = await queries.query(params.name, body);
        if (req.accepts(['application/json', 'text/plain']) === 'text/plain') {
          return { status: 200, body: renderTextTable(result), headers: { 'content-type': 'text/plain; charset=utf-8' } };
        }
        return ok(result);
      },
      listSandboxTables: async ({ params, query }) => ok(await queries.tables(params.name, query.database)),
      browseSandboxTable: async ({ params, query }) => ok(await queries.browse(params.name, params.table, query.database)),
    },
  });
  return { app, health: health as Health, sandboxes };
}

const ok = (body: unknown) => ({ status: 200, body });
