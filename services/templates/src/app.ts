import { loadSigilOpenApi } from '@sigil/proto/openapi';
import type { Express } from 'express';
import { createSigilApp } from '@sigil/kit/api';
import { listLimit } from '@sigil/kit/pagination';
import { mountHealth, type Health, type ReadinessCheck } from '@sigil/kit/http';
import { mountSubgraph } from '@sigil/kit/graphql';
import { type Logger } from '@sigil/kit/log';
import { type PrincipalVerifier } from '@sigil/kit/auth';
import type { Db } from './db.ts';
import { createTemplateService } from './templates.ts';
import { createResolvers, typeDefs } from './subgraph.ts';
import { mountInternalRoutes } from './internal/routes.ts';
import { createTemplateUses } from './internal/template-uses.ts';
import { OFFICE_TYPES, type OfficeConverter } from './files/office-convert.ts';
import type { FileStore } from './files/storage.ts';
import { PDF, createTemplateFileService } from './files/template-files.ts';
import { createVersionService } from './versions/versions.ts';
import { publishDraft } from './versions/publish.ts';
import { versionDocument } from './versions/documents.ts';
import { renderPreview } from './versions/render.ts';
import type { BodyPrinter } from './versions/print-body.ts';

export interface TemplatesAppDeps {
  db: Db;
  log: Logger;
  verifyPrincipal: PrincipalVerifier;
  readiness?: Record<string, ReadinessCheck>;
  files: { store: FileStore; converter: OfficeConverter; printer: BodyPrinter; maxBytes: number; maxPages: number };
}

export async function createApp(deps: TemplatesAppDeps): Promise<{ app: Express; health: Health }> {
  const templates = createTemplateService({ db: deps.db });
  const versions = createVersionService({ db: deps.db });
  const files = createTemplateFileService({ db: deps.db, store: deps.files.store, converter: deps.files.converter, maxPages: deps.files.maxPages, adoptFile: versions.adoptFile });
  let health: Health | undefined;
  const app = await createSigilApp({
    document: loadSigilOpenApi(),
    service: 'templates',
    log: deps.log,
    verifyPrincipal: deps.verifyPrincipal,
    db: deps.db,
    binaryBodies: { types: [PDF, ...Object.keys(OFFICE_TYPES)], limit: deps.files.maxBytes },
    mount: async (app) => {
      health = mountHealth(app, { database: async () => void (await deps.db.$queryRawUnsafe('SELECT 1')), ...deps.readiness });
      await mountSubgraph(app, { typeDefs, resolvers: createResolvers(templates, versions), verifyPrincipal: deps.verifyPrincipal });
      mountInternalRoutes(app, { verifyPrincipal: deps.verifyPrincipal, uses: createTemplateUses({ db: deps.db, store: deps.files.store }) });
    },
    handlers: {
      createTemplate: async ({ principal, body }) => ({
        status: 201,
        body: await templates.create(principal.organizationId, body),
      }),
      listTemplates: async ({ principal, query }) => ({
        status: 200,
        body: await templates.list(principal.organizationId, {
          limit: listLimit(query),
          cursor: query.cursor,
          q: query.q,
        }),
      }),
      getTemplate: async ({ principal, params }) => ({
        status: 200,
        body: await templates.get(principal.organizationId, params.id),
      }),
      uploadTemplateFile: async ({ principal, params, req, body }) => ({
        status: 201,
        body: await files.upload(principal.organizationId, params.id, (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase(), body),
      }),
      importTemplateDocument: async ({ principal, params, body }) => ({
        status: 200,
        body: await files.importDocument(principal.organizationId, params.id, body),
      }),
      saveTemplateDraft: async ({ principal, params, body }) => ({
        status: 200,
        body: await versions.saveDraft(principal.organizationId, params.id, body),
      }),
      publishTemplate: async ({ principal, params }) => ({
        status: 201,
        body: await publishDraft({ db: deps.db, store: deps.files.store, printer: deps.files.printer, maxPages: deps.files.maxPages }, principal.organizationId, params.id),
      }),
      getTemplateVersionDocument: async ({ principal, params, query }) => ({
        status: 200,
        headers: { 'content-type': PDF, 'content-disposition': `inline; filename="${params.id}-${params.version}.pdf"` },
        body: await versionDocument({ db: deps.db, store: deps.files.store, printer: deps.files.printer }, principal.organizationId, params.id, params.version, query.edited === true),
      }),
      renderTemplatePreview: async ({ principal, params, body }) => ({
        status: 200,
        headers: { 'content-type': PDF, 'content-disposition': `inline; filename="${params.id}-${params.version}-preview.pdf"` },
        body: await renderPreview({ db: deps.db, store: deps.files.store, printer: deps.files.printer }, principal.organizationId, params.id, params.version, body, principal.mode),
      }),
      getTemplateVersion: async ({ principal, params }) => ({
        status: 200,
        body: await versions.get(principal.organizationId, params.id, params.version),
      }),
      listTemplateVersions: async ({ principal, params, query }) => ({
        status: 200,
        body: await versions.list(principal.organizationId, params.id, listLimit(query), query.cursor),
      }),
      deleteTemplate: async ({ principal, params }) => {
        await templates.delete(principal.organizationId, params.id);
        return { status: 204 };
      },
    },
  });
  return { app, health: health as Health };
}
