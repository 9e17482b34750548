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

-- The draft (number NULL, at most one per template) and the published versions (numbered, immutable).
CREATE TABLE "template_versions" (
    "id" TEXT NOT NULL,
    "template_id" TEXT NOT NULL,
    "number" INTEGER,
    "file_id" TEXT,
    "body" JSONB,
    "roles" JSONB NOT NULL,
    "fields" JSONB NOT NULL,
    "variables" JSONB NOT NULL,
    "page_count" INTEGER,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "published_at" TIMESTAMPTZ(3),
    CONSTRAINT "template_versions_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "template_versions_template_id_number_key" ON "template_versions"("template_id", "number");
CREATE UNIQUE INDEX "template_versions_one_draft" ON "template_versions"("template_id") WHERE "number" IS NULL;
ALTER TABLE "template_versions" ADD CONSTRAINT "template_versions_template_id_fkey" FOREIGN KEY ("template_id") REFERENCES "templates"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "template_versions" ADD CONSTRAINT "template_versions_file_id_fkey" FOREIGN KEY ("file_id") REFERENCES "template_files"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- A published version never changes (the draft may be replaced).
CREATE FUNCTION template_versions_published_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.published_at IS NOT NULL THEN
    RAISE EXCEPTION 'published template versions are immutable';
  END IF;
  RETURN NEW;
END;
$$;
CREATE TRIGGER template_versions_no_update BEFORE UPDATE ON "template_versions" FOR EACH ROW EXECUTE FUNCTION template_versions_published_immutable();
