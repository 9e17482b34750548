-- Uploaded template files: the stored PDF (converted from a word-processor file when `converted`). Immutable.
CREATE TABLE "template_files" (
    "id" TEXT NOT NULL,
    "template_id" TEXT NOT NULL,
    "organization_id" TEXT NOT NULL,
    "content_type" TEXT NOT NULL,
    "converted" BOOLEAN NOT NULL,
    "page_count" INTEGER NOT NULL,
    "pages" JSONB NOT NULL,
    "sha256" TEXT NOT NULL,
    "size" INTEGER NOT NULL,
    "storage_key" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "template_files_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "template_files_template_id_created_at_idx" ON "template_files"("template_id", "created_at");
ALTER TABLE "template_files" ADD CONSTRAINT "template_files_template_id_fkey" FOREIGN KEY ("template_id") REFERENCES "templates"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- A stored file never changes: its bytes in S3 are addressed by this row.
CREATE FUNCTION template_files_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'template files are immutable';
END;
$$;
CREATE TRIGGER template_files_no_update BEFORE UPDATE ON "template_files" FOR EACH ROW EXECUTE FUNCTION template_files_immutable();
