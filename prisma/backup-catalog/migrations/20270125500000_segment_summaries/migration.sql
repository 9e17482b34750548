-- What each change-log segment did, summarised by the mover when it uploads the segment (issue 31): tables touched
-- with their row counts, the schema statements, and a sentence a person reads. Older segments have none.

ALTER TABLE "segments"
  ADD COLUMN "tables" JSONB,
  ADD COLUMN "ddl" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[],
  ADD COLUMN "schema_changes" INTEGER,
  ADD COLUMN "explanation" TEXT,
  ADD COLUMN "summary_error" TEXT;
