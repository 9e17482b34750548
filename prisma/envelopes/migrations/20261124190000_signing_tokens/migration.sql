-- Signing-session tokens (sgls_): stored by their SHA-256 only, single-use, revocable (a resend, a new turn).
CREATE TABLE "signing_tokens" (
    "token_hash" TEXT NOT NULL,
    "envelope_id" TEXT NOT NULL,
    "recipient_id" TEXT NOT NULL,
    "purpose" TEXT NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "used_at" TIMESTAMPTZ(3),
    "revoked_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "signing_tokens_pkey" PRIMARY KEY ("token_hash"),
    CONSTRAINT "signing_tokens_purpose_check" CHECK ("purpose" IN ('link', 'session'))
);
CREATE INDEX "signing_tokens_recipient_id_idx" ON "signing_tokens"("recipient_id");
ALTER TABLE "signing_tokens" ADD CONSTRAINT "signing_tokens_recipient_id_fkey" FOREIGN KEY ("recipient_id") REFERENCES "recipients"("id") ON DELETE CASCADE ON UPDATE CASCADE;
