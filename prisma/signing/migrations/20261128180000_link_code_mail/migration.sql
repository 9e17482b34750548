-- A visitor's code is e-mailed off the request path: the verification is written first (no code yet), a sender makes
-- the code, keeps its hash and mails it. `mail` holds what the e-mail says (organization, link title, mode).
ALTER TABLE "link_verifications" ALTER COLUMN "code_hash" DROP NOT NULL;
ALTER TABLE "link_verifications" ADD COLUMN "code_sent_at" TIMESTAMPTZ(3);
ALTER TABLE "link_verifications" ADD COLUMN "mail" JSONB NOT NULL DEFAULT '{}';
UPDATE "link_verifications" SET "code_sent_at" = "created_at";
CREATE INDEX "link_verifications_code_sent_at_created_at_idx" ON "link_verifications"("code_sent_at", "created_at");
