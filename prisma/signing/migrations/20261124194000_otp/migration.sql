-- One-time codes: each challenge belongs to one access token (the signer's session), its code stored hashed.
ALTER TABLE "access_tokens" ADD COLUMN "verified_at" TIMESTAMPTZ(3);

CREATE TABLE "otp_challenges" (
    "id" TEXT NOT NULL,
    "access_token_hash" TEXT NOT NULL,
    "recipient_id" TEXT NOT NULL,
    "channel" TEXT NOT NULL,
    "code_hash" TEXT NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "verified_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "otp_challenges_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "otp_challenges_channel_check" CHECK ("channel" IN ('email', 'sms'))
);
CREATE INDEX "otp_challenges_access_token_hash_created_at_idx" ON "otp_challenges"("access_token_hash", "created_at");
