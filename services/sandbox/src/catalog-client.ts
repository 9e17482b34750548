import { AppError, type ErrorCode } from '@sigil/kit/errors';
import { STRATA_PRINCIPAL_HEADER, type StrataPrincipalSigner } from '@sigil/kit/auth';
import {
  INTERNAL_CATALOG_PREFIX,
  SANDBOX_SERVICE_ROLE,
  sandboxRestorePath,
  type PrepareSandboxRestore,
  type SandboxRestorePlan,
  type StartSandboxRestore,
} from '@sigil/proto/internal-catalog';
import type { StrataPrincipal } from '@sigil/proto/strata';

/** What the sandbox service asks the catalog (proto/src/internal-catalog.ts); tests replace it with a fake. */
export interface CatalogClient {
  prepare(actingFor: StrataPrincipal | undefined, input: PrepareSandboxRestore): Promise<SandboxRestorePlan>;
  start(namespace: string, name: string, server: StartSandboxRestore): Promise<{ restoreId: string }>;
  fail(namespace: string, name: string, message: string): Promise<void>;
}

const STATUS_CODES: Record<number, ErrorCode> = { 400: 'validation-failed', 403: 'forbidden', 404: 'not-found', 409: 'conflict', 422: 'not-restorable' };

export function createCatalogClient(options: { baseUrl: string; sign: StrataPrincipalSigner; timeoutMs?: number }): CatalogClient {
  async function call<T>(path: string, body: unknown, actingFor?: StrataPrincipal): Promise<T> {
    const principal: StrataPrincipal = { id: 'sandbox', email: '', role: SANDBOX_SERVICE_ROLE, groups: [], orgs: actingFor?.orgs ?? [], projects: actingFor?.projects ?? [], service: true };
    let response: Response;
    try {
      response = await fetch(new URL(path, options.baseUrl), {
        method: 'POST',
        headers: { 'content-type': 'application/json', [STRATA_PRINCIPAL_HEADER]: await options.sign(principal) },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(options.timeoutMs ?? 30_000),
      });
    } catch (error) {
      throw new AppError('service-unavailable', 'The backup-catalog service did not answer; try again.', { cause: error });
    }
    const answer = (await response.json().catch(() => ({}))) as { error?: string };
    if (response.ok) return answer as T;
    const code = STATUS_CODES[response.status];
    if (code) throw new AppError(code, answer.error ?? `The catalog answered ${response.status}.`);
    throw new AppError('bad-gateway', `The backup-catalog service answered ${response.status}: ${answer.error ?? ''}`.trim());
  }
  return {
    prepare: (actingFor, input) => call<SandboxRestorePlan>(INTERNAL_CATALOG_PREFIX, input, actingFor),
    start: (namespace, name, server) => call<{ restoreId: string }>(sandboxRestorePath(namespace, name, 'start'), server),
    fail: async (namespace, name, message) => void (await call(sandboxRestorePath(namespace, name, 'fail'), { message })),
  };
}
