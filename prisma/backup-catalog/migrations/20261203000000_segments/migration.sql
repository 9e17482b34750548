-- Point-in-time recovery: the segments of each target's change log, and the plan a restore followed.
ALTER TABLE "restores" ADD COLUMN "plan" JSONB;

CREATE TABLE "segments" (
    "seq" BIGSERIAL NOT NULL,
    "key" TEXT NOT NULL,
    "namespace" TEXT NOT NULL,
    "target_name" TEXT NOT NULL,
    "chain_id" TEXT NOT NULL,
    "timeline" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "start_pos" TEXT NOT NULL,
    "end_pos" TEXT NOT NULL,
    "start_lsn" BIGINT NOT NULL,
    "end_lsn" BIGINT NOT NULL,
    "first_time" TIMESTAMPTZ(6),
    "last_time" TIMESTAMPTZ(6),
    "covered_until" TIMESTAMPTZ(6),
    "commits" INTEGER NOT NULL DEFAULT 0,
    "sha256" TEXT NOT NULL,
    "size" BIGINT NOT NULL DEFAULT 0,
    "raw_size" BIGINT NOT NULL DEFAULT 0,
    "partial" BOOLEAN NOT NULL DEFAULT false,
    "compression" TEXT NOT NULL DEFAULT 'zstd',
    "uploaded_at" TIMESTAMPTZ(3) NOT NULL,
    "missing" BOOLEAN NOT NULL DEFAULT false,
    CONSTRAINT "segments_pkey" PRIMARY KEY ("seq")
);
CREATE UNIQUE INDEX "segments_key_key" ON "segments"("key");
CREATE INDEX "segments_namespace_target_name_start_lsn_idx" ON "segments"("namespace", "target_name", "start_lsn");
CREATE INDEX "segments_uploaded_at_idx" ON "segments"("uploaded_at");
