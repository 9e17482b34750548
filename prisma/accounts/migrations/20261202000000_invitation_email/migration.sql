-- Invitations are e-mailed (the accounts-invitation-mail job): the e-mailed link carries a token of its own, minted when
-- the e-mail is sent, so no token is ever stored except as its SHA-256; emailed_at makes a redelivered job a no-op.
ALTER TABLE "invitations" ADD COLUMN "email_token_hash" TEXT;
ALTER TABLE "invitations" ADD COLUMN "emailed_at" TIMESTAMPTZ(3);
CREATE UNIQUE INDEX "invitations_email_token_hash_key" ON "invitations"("email_token_hash");
