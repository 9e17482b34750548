-- What the console's timeline reads of every backup of a target, kept in columns of their own: a whole history of
-- 2,000 backups is read in about 1 ms instead of 35 ms spent opening every manifest (a detoast and a JSON parse per
-- row). A trigger fills them from the row itself, whoever writes it (the catalog, the mirror, a copy made by hand), so
-- they cannot disagree with the manifest.

ALTER TABLE "backups" ADD COLUMN "manifest_mode" TEXT, ADD COLUMN "manifest_consistent_at" TEXT;

CREATE FUNCTION "strata_backup_manifest_columns"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW."manifest_mode" := NEW."manifest"->>'mode';
  NEW."manifest_consistent_at" := NEW."manifest"->>'consistentAt';
  RETURN NEW;
END $$;

CREATE TRIGGER "backups_manifest_columns" BEFORE INSERT OR UPDATE OF "manifest" ON "backups" FOR EACH ROW EXECUTE FUNCTION "strata_backup_manifest_columns"();

UPDATE "backups" SET "manifest_mode" = "manifest"->>'mode', "manifest_consistent_at" = "manifest"->>'consistentAt' WHERE "manifest" IS NOT NULL;
