// Minimal types for oidc-provider 9 (the package ships none): what the local identity provider (packages/local-idp) uses.
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  export interface AdapterPayload {
    [key: string]: unknown;
    grantId?: string;
    userCode?: string;
    uid?: string;
    consumed?: number;
  }

  export interface Adapter {
    upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void>;
    find(id: string): Promise<AdapterPayload | undefined>;
    findByUserCode(userCode: string): Promise<AdapterPayload | undefined>;
    findByUid(uid: string): Promise<AdapterPayload | undefined>;
    consume(id: string): Promise<void>;
    destroy(id: string): Promise<void>;
    revokeByGrantId(grantId: string): Promise<void>;
  }

  export interface Account {
    accountId: string;
    claims(use: string, scope: string): Promise<Record<string, unknown>> | Record<string, unknown>;
  }

  export interface KoaContextWithOIDC {
    oidc: { client?: { clientId: string }; params?: Record<string, unknown>; result?: Record<string, unknown> };
    type: string;
    body: unknown;
    set(headers: Record<string, string>): void;
  }

  export interface Configuration {
    adapter?: new (name: string) => Adapter;
    clients?: Array<Record<string, unknown>>;
    claims?: Record<string, string[]>;
    conformIdTokenClaims?: boolean;
    cookies?: { keys?: string[] };
    features?: Record<string, { enabled: boolean } & Record<string, unknown>>;
    findAccount?: (ctx: KoaContextWithOIDC, sub: string) => Promise<Account | undefined>;
    interactions?: { url(ctx: KoaContextWithOIDC, interaction: { uid: string }): string; policy?: interactionPolicy.Prompt[] };
    jwks?: { keys: Array<Record<string, unknown>> };
    pkce?: { required?: (ctx: KoaContextWithOIDC, client: unknown) => boolean };
    renderError?: (ctx: KoaContextWithOIDC, out: { error: string; error_description?: string }, error: Error) => void | Promise<void>;
    clientBasedCORS?: (ctx: KoaContextWithOIDC, origin: string, client: unknown) => boolean;
    responseTypes?: string[];
    scopes?: string[];
    ttl?: Record<string, number>;
  }

  export interface InteractionDetails {
    uid: string;
    prompt: { name: string; details: Record<string, unknown> };
    params: Record<string, unknown> & { client_id?: string; login_hint?: string; scope?: string };
  }

  export class Grant {
    constructor(properties: { accountId: string; clientId: string });
    addOIDCScope(scope: string): void;
    save(): Promise<string>;
  }

  export interface ClientInstance {
    clientId: string;
    redirectUriAllowed(uri: string): boolean;
  }

  export namespace interactionPolicy {
    class Check {
      static REQUEST_PROMPT: true;
      static NO_NEED_TO_PROMPT: false;
      constructor(reason: string, description: string, check: (ctx: KoaContextWithOIDC) => boolean);
    }
    interface Prompt {
      name: string;
      checks: Check[] & { add(check: Check, index?: number): void };
    }
    function base(): Prompt[] & { get(name: string): Prompt | undefined };
  }

  export default class Provider {
    constructor(issuer: string, configuration?: Configuration);
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<InteractionDetails>;
    interactionFinished(req: IncomingMessage, res: ServerResponse, result: Record<string, unknown>, options?: { mergeWithLastSubmission?: boolean }): Promise<void>;
    Grant: typeof Grant;
    Client: { prototype: ClientInstance; find(id: string): Promise<ClientInstance | undefined> };
    on(event: string, listener: (...args: unknown[]) => void): this;
  }
}
