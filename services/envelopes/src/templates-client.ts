import { AppError } from '@sigil/kit/errors';
import { createServiceClient, unexpectedAnswer, type Mode, type PrincipalSigner } from '@sigil/kit/auth';
import {
  templateDocumentPath,
  templateUsesPath,
  templateVersionPath,
  type RecordTemplateUse,
  type TemplateVersionSnapshot,
} from '@sigil/proto/internal-templates';

/** The templates service as envelopes sees it (proto/src/internal-templates.ts). */
export interface TemplatesClient {
  /** The published version, or undefined when the template or version does not exist for this organization. */
  version(caller: Caller, templateId: string, version: number | 'latest'): Promise<TemplateVersionSnapshot | undefined>;
  /** Records the use and answers the version, or undefined as above. */
  use(caller: Caller, templateId: string, use: RecordTemplateUse): Promise<TemplateVersionSnapshot | undefined>;
  /** The version's PDF. */
  document(caller: Caller, templateId: string, version: number): Promise<Buffer>;
}

export interface Caller {
  organizationId: string;
  mode: Mode;
}

export interface TemplatesClientOptions {
  baseUrl: string;
  signPrincipal: PrincipalSigner;
  timeoutMs?: number;
  fetch?: typeof fetch;
}

export function createTemplatesClient(options: TemplatesClientOptions): TemplatesClient {
  const send = createServiceClient({ target: 'templates', actorId: 'envelopes', ...options });

  async function call(caller: Caller, path: string, init: { method?: string; body?: unknown } = {}): Promise<Response | undefined> {
    const response = await send(path, { organizationId: caller.organizationId, mode: caller.mode, method: init.method, json: init.body });
    if (response.status === 404) return undefined;
    if (!response.ok) throw await unexpectedAnswer('templates', response);
    return response;
  }

  return {
    async version(caller, templateId, version) {
      return (await (await call(caller, templateVersionPath(templateId, version)))?.json()) as TemplateVersionSnapshot | undefined;
    },
    async use(caller, templateId, use) {
      return (await (await call(caller, templateUsesPath(templateId), { method: 'POST', body: use }))?.json()) as TemplateVersionSnapshot | undefined;
    },
    async document(caller, templateId, version) {
      const response = await call(caller, templateDocumentPath(templateId, version));
      if (!response) throw new AppError('not-found', `Version ${version} of template ${templateId} has no document.`);
      return Buffer.from(await response.arrayBuffer());
    },
  };
}
