import { graphql } from '../../gql';
import type { RestoreFollowQuery, RestoreListQuery } from '../../gql/graphql.ts';

/** One restore as the progress panel and the detail page show it. */
export const RestoreQuery = graphql(`
  query RestoreFollow($namespace: String!, $name: String!) {
    strataRestore(namespace: $namespace, name: $name) {
      namespace
      name
      mode
      phase
      message
      requestedBy
      sandbox
      downloadURL
      downloadExpires
      created
      durationSeconds
      progress {
        stage
        bytes
        totalBytes
        updatedAt
      }
      target {
        namespace
        name
        engine
      }
      backup {
        id
        time
        mode
      }
      safetyBackup
      source {
        backupID
        time
        latest
        targetNamespace
      }
      destination {
        mode
        sandboxTTL
        expose
        deleteAfter
        database
        host
        tables
      }
      plan {
        baseBackupID
        segments
        bytes
        targetTime
        effectiveTime
        message
      }
      checks {
        name
        passed
        message
      }
    }
  }
`);

/** A sandbox being filled: its phase after the restore (Ready once its post-restore SQL ran), and which restore fills it. */
export const SandboxFollowQuery = graphql(`
  query RestoreSandboxFollow($name: String!) {
    strataSandbox(name: $name) {
      name
      namespace
      phase
      message
      restore
    }
  }
`);

/** Every restore, newest first. */
export const RestoresQuery = graphql(`
  query RestoreList($limit: Int) {
    strataRestores(limit: $limit) {
      namespace
      name
      mode
      phase
      message
      requestedBy
      sandbox
      created
      durationSeconds
      target {
        namespace
        name
      }
      backup {
        id
        time
      }
      plan {
        targetTime
        effectiveTime
        segments
      }
      source {
        latest
        time
      }
    }
  }
`);

export type RestoreView = NonNullable<RestoreFollowQuery['strataRestore']>;
export type RestoreRow = RestoreListQuery['strataRestores'][number];
