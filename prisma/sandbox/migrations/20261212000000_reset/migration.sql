-- What a reset restores again: the backup or the moment, and the tables (SandboxRestorePlan.source).
ALTER TABLE "sandboxes" ADD COLUMN "source" JSONB NOT NULL DEFAULT '{}';
