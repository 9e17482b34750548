import { graphql } from '../../gql';
import type { ConsoleSandboxQuery } from '../../gql/graphql.ts';

/** One sandbox as its page shows it (the sandbox subgraph; backup and target resolved by the catalog). */
export const SandboxQuery = graphql(`
  query ConsoleSandbox($name: String!) {
    strataSandbox(name: $name) {
      name
      phase
      message
      engine
      database
      databases
      host
      port
      expires
      created
      ready
      time
      owner
      sizeLimit
      usedBytes
      connect
      restore
      resetGeneration
      observedResetGeneration
      extensions {
        by
        granted
        reason
        user
        at
      }
      backup {
        id
        mode
        time
      }
      target {
        namespace
        name
      }
    }
  }
`);

export type Sandbox = NonNullable<ConsoleSandboxQuery['strataSandbox']>;

/** Phases whose sandbox still lives: it can be extended (and, once Ready, reset and queried). */
export const LIVING_PHASES = ['Pending', 'Restoring', 'Ready'];
