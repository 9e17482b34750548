-- Retention (why a backup is kept, until when, and when it expired), the load guard's postponements, expired segments.
ALTER TABLE "backups" ADD COLUMN "retained_by" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[];
ALTER TABLE "backups" ADD COLUMN "expires_at" TIMESTAMPTZ(3);
ALTER TABLE "backups" ADD COLUMN "expired_at" TIMESTAMPTZ(3);
ALTER TABLE "backups" ADD COLUMN "expired_reason" TEXT;
ALTER TABLE "backups" ADD COLUMN "postpones" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "backups" ADD COLUMN "postponed_until" TIMESTAMPTZ(3);
ALTER TABLE "backups" ADD COLUMN "skip_load_guard" BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE "segments" ADD COLUMN "expired" BOOLEAN NOT NULL DEFAULT false;
