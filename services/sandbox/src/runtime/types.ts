/** What a sandbox's server needs: its engine (and for postgres the backup's major) and the admin it is created with. */
export interface ServerSpec {
  id: string;
  engine: 'postgres' | 'mysql';
  major: number;
  username: string;
  password: string;
  /** The sandbox's size limit (a Kubernetes runtime sizes the data volume by it; the local one watches disk use). */
  sizeLimitBytes?: number;
}

/** Where a runtime keeps one sandbox's server; stored with the sandbox so a restarted service finds it again. */
export interface RuntimeState {
  engine: ServerSpec['engine'];
  dir: string;
  host: string;
  port: number;
  pid?: number;
}

/**
 * Runs sandbox database servers. The local runtime starts real server processes on loopback ports; a Kubernetes
 * runtime would create a pod, a service and a secret. Same interface.
 */
export interface SandboxRuntime {
  readonly kind: 'local' | 'kubernetes';
  /** Creates the server when `previous` is absent, else starts it again on its data (or adopts it when it still runs). */
  start(spec: ServerSpec, previous?: RuntimeState): Promise<RuntimeState>;
  /** True while the server runs and answers. */
  alive(state: RuntimeState): Promise<boolean>;
  stop(state: RuntimeState): Promise<void>;
  /** Stops the server and deletes its data. */
  wipe(state: RuntimeState): Promise<void>;
  /** Bytes the server's data use. */
  usedBytes(state: RuntimeState): Promise<number>;
}

export const LOOPBACK = '127.0.0.1';

export interface RunAs {
  uid: number;
  gid: number;
}

/** How one engine's server is created, started and probed (postgres.ts, mariadb.ts). */
export interface EngineServer {
  /** Creates the data directory `dir/data` with `spec`'s admin. */
  init(dir: string, spec: ServerSpec, user: RunAs | undefined): Promise<void>;
  /** The command line that runs the server on `port`. */
  command(dir: string, spec: ServerSpec, port: number): { command: string; args: string[] };
  /** Resolves when the server answers `spec`'s admin on `port`, rejects with why not. */
  probe(spec: ServerSpec, port: number): Promise<void>;
  /** The account the server runs as when we are root. */
  account: string;
  /** The signal of a quick, clean shutdown (postgres: SIGINT, "fast"; mariadbd: SIGTERM). */
  stopSignal: NodeJS.Signals;
}
