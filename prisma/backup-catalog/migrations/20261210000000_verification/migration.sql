-- Verification restores: what a backup's last verification found, and the checks a restore ran.
ALTER TABLE "backups" ADD COLUMN "verified" BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE "backups" ADD COLUMN "verify_failed" BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE "backups" ADD COLUMN "verified_at" TIMESTAMPTZ(3);
ALTER TABLE "backups" ADD COLUMN "verify_rto_seconds" DOUBLE PRECISION;
ALTER TABLE "restores" ADD COLUMN "checks" JSONB;
