import type * as Validated from '../gen/resources-validated.ts';
import type { ResourceKind } from './kinds.ts';

/**
 * Document types as `validateResource` returns them (defaults applied). They are generated from the schemas in
 * `proto/resources/` (`proto/src/gen/resources-validated.ts`: a property with a `default` is required there);
 * this module only gives them the names the catalog and the mover use.
 */

export type ResourceMetadata = Validated.ObjectMeta;
export type ResourceCondition = Validated.Condition;
export type ResourceSecretReference = Validated.SecretReference;
export type ResourceCredentialsSecretRef = Validated.CredentialsSecretRef;
export type ResourceDatabaseEndpoint = Validated.DatabaseEndpoint;
export type ResourceSQLCheck = Validated.SQLCheck;
export type ResourceBackupRef = Validated.BackupRef;
export type ResourceProgress = Validated.Progress;
export type ResourceCheckResult = Validated.CheckResult;

export type BackupStoreSpec = Validated.BackupStoreSpec;
export type BackupStoreStatus = Validated.BackupStoreStatus;
export type BackupStoreResource = Validated.BackupStore;

export type BackupCompressionAlgorithm = Validated.Compression['algorithm'];
export type BackupCompressionLevel = Validated.Compression['level'];
export type BackupPolicySpec = Validated.BackupPolicySpec;
export type BackupPolicyStatus = Validated.BackupPolicyStatus;
export type BackupPolicyResource = Validated.BackupPolicy;

export type BackupTargetScopeMode = NonNullable<Validated.Scope['mode']>;
export type BackupTargetSpec = Validated.BackupTargetSpec;
export type BackupTargetStatus = Validated.BackupTargetStatus;
export type BackupTargetResource = Validated.BackupTarget;
export type TargetPitrStatus = Validated.TargetPitrStatus;

export type BackupSpec = Validated.BackupSpec;
export type BackupStatus = Validated.BackupStatus;
export type BackupResource = Validated.Backup;

export type RestoreDestinationMode = Validated.Destination['mode'];
export type RestoreSpec = Validated.RestoreSpec;
export type RestoreStatus = Validated.RestoreStatus;
export type RestoreResource = Validated.Restore;

export type SandboxSpec = Validated.SandboxSpec;
export type SandboxStatus = Validated.SandboxStatus;
export type SandboxResource = Validated.Sandbox;

export type AnyResource = BackupStoreResource | BackupPolicyResource | BackupTargetResource | BackupResource | RestoreResource | SandboxResource;

/** The document type of one kind. */
export type ResourceOfKind<K extends ResourceKind> = Extract<AnyResource, { kind: K }>;

