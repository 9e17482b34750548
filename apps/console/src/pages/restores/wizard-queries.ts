import { graphql } from '../../gql';
import type { RestoreBackupInventoryQuery, RestorePlanQuery, RestoreTargetQuery, RestoreTimelineQuery } from '../../gql/graphql.ts';

/** The targets to choose from: every one the caller may see. */
export const TargetsQuery = graphql(`
  query RestoreTargets {
    strataTargets {
      namespace
      name
      engine
      pitr
    }
  }
`);

/** What the moment step needs of the chosen target: its windows, and its full backups (restorable without windows). */
export const TargetQuery = graphql(`
  query RestoreTarget($namespace: String!, $name: String!) {
    strataTarget(namespace: $namespace, name: $name) {
      namespace
      name
      engine
      pitr
      chainBroken
      chainBrokenReason
      windows {
        from
        to
      }
      backups(limit: 1000) {
        id
        phase
        time
      }
    }
  }
`);

/** The target's history over the range the timeline shows (both ends null: its whole history, to now). */
export const TimelineQuery = graphql(`
  query RestoreTimeline($namespace: String!, $name: String!, $from: String, $to: String, $maxSpans: Int) {
    strataTarget(namespace: $namespace, name: $name) {
      namespace
      name
      timeline(from: $from, to: $to, maxSpans: $maxSpans) {
        ...TimelineParts
      }
    }
  }
`);

/** What a restore to the moment takes, or why it cannot be. */
export const PlanQuery = graphql(`
  query RestorePlan($namespace: String!, $name: String!, $at: String!) {
    strataPlan(namespace: $namespace, name: $name, at: $at) {
      restorable
      reason
      baseBackupID
      baseTime
      effectiveTime
      targetTime
      bytes
      segments
    }
  }
`);

/** The base backup's databases and tables, for the table picker. */
export const BackupInventoryQuery = graphql(`
  query RestoreBackupInventory($id: ID!) {
    strataBackup(id: $id) {
      id
      mode
      databases
      inventory {
        databases {
          name
          tables {
            schema
            name
            kind
            rowsEstimate
          }
        }
      }
    }
  }
`);

export type WizardTarget = NonNullable<RestoreTargetQuery['strataTarget']>;
export type TargetTimeline = NonNullable<RestoreTimelineQuery['strataTarget']>['timeline'];
export type Plan = NonNullable<RestorePlanQuery['strataPlan']>;
export type BaseBackup = NonNullable<RestoreBackupInventoryQuery['strataBackup']>;
