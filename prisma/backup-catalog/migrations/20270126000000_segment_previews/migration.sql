-- Masked row previews of change-log segments (issue 31): the mover stores them beside the segment, encrypted; the
-- catalog keeps where they are, their checksum and size, or why there are none. Older segments have none.

ALTER TABLE "segments"
  ADD COLUMN "previews_key" TEXT,
  ADD COLUMN "previews_sha256" TEXT,
  ADD COLUMN "preview_rows" INTEGER,
  ADD COLUMN "previews_error" TEXT;
