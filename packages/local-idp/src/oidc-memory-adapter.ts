/**
 * oidc-provider's storage in this process's memory, one store per provider (the library's own development adapter
 * shares one module-wide store between providers and warns on every start). Entries expire when the provider says.
 */
import type { Adapter, AdapterPayload } from 'oidc-provider';

/** The models revoked with their grant (as oidc-provider's own adapter has them); others carry a grantId for reference only. */
const GRANTABLE = new Set(['AccessToken', 'AuthorizationCode', 'RefreshToken', 'DeviceCode', 'BackchannelAuthenticationRequest', 'PreAuthorizedCode']);

interface Entry {
  payload: AdapterPayload;
  expiresAt: number | undefined;
}

/** The adapter class for a provider's configuration: every model (`name`) of that provider shares `store`. */
export function memoryAdapter(): new (name: string) => Adapter {
  const store = new Map<string, Entry>();
  const live = (key: string): AdapterPayload | undefined => {
    const entry = store.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt !== undefined && entry.expiresAt <= Date.now()) {
      store.delete(key);
      return undefined;
    }
    return entry.payload;
  };
  const removeExpired = () => {
    for (const key of [...store.keys()]) live(key);
  };

  return class MemoryAdapter implements Adapter {
    private readonly name: string;

    constructor(name: string) {
      this.name = name;
    }

    private key(id: string) {
      return `${this.name}:${id}`;
    }

    async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
      removeExpired();
      store.set(this.key(id), { payload, expiresAt: expiresIn === undefined ? undefined : Date.now() + expiresIn * 1000 });
      // Indexes the provider looks entries up by besides their id.
      const expiresAt = store.get(this.key(id))!.expiresAt;
      if (payload.uid) store.set(`uid:${payload.uid}`, { payload: { id: this.key(id) }, expiresAt });
      if (payload.userCode) store.set(`userCode:${payload.userCode}`, { payload: { id: this.key(id) }, expiresAt });
      if (payload.grantId && GRANTABLE.has(this.name)) {
        const grant = (live(`grant:${payload.grantId}`)?.keys as string[] | undefined) ?? [];
        store.set(`grant:${payload.grantId}`, { payload: { keys: [...grant, this.key(id)] }, expiresAt: undefined });
      }
    }

    async find(id: string): Promise<AdapterPayload | undefined> {
      return live(this.key(id));
    }

    async findByUid(uid: string): Promise<AdapterPayload | undefined> {
      const index = live(`uid:${uid}`);
      return index ? live(index.id as string) : undefined;
    }

    async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
      const index = live(`userCode:${userCode}`);
      return index ? live(index.id as string) : undefined;
    }

    async consume(id: string): Promise<void> {
      const payload = live(this.key(id));
      if (payload) payload.consumed = Math.floor(Date.now() / 1000);
    }

    async destroy(id: string): Promise<void> {
      store.delete(this.key(id));
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      for (const key of (live(`grant:${grantId}`)?.keys as string[] | undefined) ?? []) store.delete(key);
      store.delete(`grant:${grantId}`);
    }
  };
}
