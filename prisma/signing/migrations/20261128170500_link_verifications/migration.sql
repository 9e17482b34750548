-- Visitors' e-mail checks on always-on signing links, their codes stored hashed.
CREATE TABLE "link_verifications" (
    "id" TEXT NOT NULL,
    "signing_link_id" TEXT NOT NULL,
    "organization_id" TEXT NOT NULL,
    "email" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "code_hash" TEXT NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "used_at" TIMESTAMPTZ(3),
    "envelope_id" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "link_verifications_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "link_verifications_signing_link_id_email_created_at_idx" ON "link_verifications"("signing_link_id", "email", "created_at");

-- Rate-limit counters of the links' caps (rate-limiter-flexible's layout), shared by every replica.
CREATE TABLE "rate_limits" (
    "key" TEXT NOT NULL,
    "points" INTEGER NOT NULL DEFAULT 0,
    "expire" BIGINT,
    CONSTRAINT "rate_limits_pkey" PRIMARY KEY ("key")
);
