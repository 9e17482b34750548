-- What the web console reads through GraphQL: a target's change-capture chain without recomputing it per request,
-- and its timeline (backups, segments, verifications by time).

-- The version of a target's change-capture inputs (its segments and its backups): the triggers below give `token` a
-- new random value whenever one of them is written, whoever writes it (reports, the mirror, retention, garbage
-- collection). A chain computed under a token stays true until the token changes; a random token is never reused,
-- not even after a rolled-back write, nor by another catalog database.
CREATE TABLE "chain_inputs" (
    "namespace" TEXT NOT NULL,
    "target_name" TEXT NOT NULL,
    "token" TEXT NOT NULL DEFAULT (gen_random_uuid())::text,
    CONSTRAINT "chain_inputs_pkey" PRIMARY KEY ("namespace", "target_name")
);

INSERT INTO "chain_inputs" ("namespace", "target_name")
SELECT "namespace", "target_name" FROM "segments" UNION SELECT "namespace", "target_name" FROM "backups";

-- Statement-level, over the transition table `changed_rows`: a bulk write (the mirror's, retention's) renews each
-- target's token once.
CREATE FUNCTION "strata_renew_chain_inputs"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "chain_inputs" ("namespace", "target_name")
  SELECT DISTINCT "namespace", "target_name" FROM changed_rows
  ON CONFLICT ("namespace", "target_name") DO UPDATE SET "token" = (gen_random_uuid())::text;
  RETURN NULL;
END $$;

CREATE TRIGGER "segments_inserted_renew_chain" AFTER INSERT ON "segments" REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION "strata_renew_chain_inputs"();
CREATE TRIGGER "segments_updated_renew_chain" AFTER UPDATE ON "segments" REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION "strata_renew_chain_inputs"();
CREATE TRIGGER "segments_deleted_renew_chain" AFTER DELETE ON "segments" REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION "strata_renew_chain_inputs"();
CREATE TRIGGER "backups_inserted_renew_chain" AFTER INSERT ON "backups" REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION "strata_renew_chain_inputs"();
CREATE TRIGGER "backups_deleted_renew_chain" AFTER DELETE ON "backups" REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION "strata_renew_chain_inputs"();

-- A backup's progress is written every two seconds while it runs: only a change to what a chain reads renews the token.
CREATE FUNCTION "strata_renew_chain_inputs_of_backups"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "chain_inputs" ("namespace", "target_name")
  SELECT DISTINCT n."namespace", n."target_name"
  FROM new_rows n JOIN old_rows o ON o."id" = n."id"
  WHERE (n."phase", n."engine", n."manifest", n."completed_at", n."queued_at", n."stored_bytes", n."namespace", n."target_name")
        IS DISTINCT FROM (o."phase", o."engine", o."manifest", o."completed_at", o."queued_at", o."stored_bytes", o."namespace", o."target_name")
  ON CONFLICT ("namespace", "target_name") DO UPDATE SET "token" = (gen_random_uuid())::text;
  RETURN NULL;
END $$;

CREATE TRIGGER "backups_updated_renew_chain" AFTER UPDATE ON "backups" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "strata_renew_chain_inputs_of_backups"();

-- A target's verification restores, by when they finished (the timeline's verifications).
CREATE INDEX "restores_target_namespace_target_name_completed_at_idx" ON "restores"("target_namespace", "target_name", "completed_at");
