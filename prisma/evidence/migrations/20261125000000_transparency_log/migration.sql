-- The transparency logs (one per mode), their signed anchors, the keys that sign them, and each envelope's seal.
CREATE TABLE "log_heads" (
    "mode" TEXT NOT NULL,
    "size" BIGINT NOT NULL DEFAULT 0,
    "frontier" BYTEA[] NOT NULL DEFAULT '{}',
    CONSTRAINT "log_heads_pkey" PRIMARY KEY ("mode")
);
INSERT INTO "log_heads" ("mode") VALUES ('live'), ('test');

CREATE TABLE "log_leaves" (
    "mode" TEXT NOT NULL,
    "idx" BIGINT NOT NULL,
    "leaf_data" BYTEA NOT NULL,
    "document_sha256" TEXT NOT NULL,
    "envelope_id" TEXT NOT NULL,
    "organization_id" TEXT NOT NULL,
    "document" TEXT NOT NULL,
    "completed_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "log_leaves_pkey" PRIMARY KEY ("mode","idx")
);
CREATE UNIQUE INDEX "log_leaves_document_sha256_key" ON "log_leaves"("document_sha256");
CREATE INDEX "log_leaves_envelope_id_idx" ON "log_leaves"("envelope_id");

CREATE TABLE "log_nodes" (
    "mode" TEXT NOT NULL,
    "level" INTEGER NOT NULL,
    "idx" BIGINT NOT NULL,
    "hash" BYTEA NOT NULL,
    CONSTRAINT "log_nodes_pkey" PRIMARY KEY ("mode","level","idx")
);

CREATE TABLE "log_anchors" (
    "sequence" BIGSERIAL NOT NULL,
    "mode" TEXT NOT NULL,
    "origin" TEXT NOT NULL,
    "tree_size" BIGINT NOT NULL,
    "root" TEXT NOT NULL,
    "checkpoint" TEXT NOT NULL,
    "kid" TEXT NOT NULL,
    "signature" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "log_anchors_pkey" PRIMARY KEY ("sequence")
);
CREATE UNIQUE INDEX "log_anchors_mode_tree_size_key" ON "log_anchors"("mode", "tree_size");

CREATE TABLE "anchor_keys" (
    "kid" TEXT NOT NULL,
    "public_key" BYTEA NOT NULL,
    "verifier_key" TEXT NOT NULL,
    "not_before" TIMESTAMPTZ(3) NOT NULL,
    "not_after" TIMESTAMPTZ(3),
    CONSTRAINT "anchor_keys_pkey" PRIMARY KEY ("kid")
);

CREATE TABLE "seals" (
    "envelope_id" TEXT NOT NULL,
    "organization_id" TEXT NOT NULL,
    "test_mode" BOOLEAN NOT NULL,
    "status" TEXT NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "last_error" TEXT,
    "sealed_sha256" TEXT,
    "certificate_sha256" TEXT,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "seals_pkey" PRIMARY KEY ("envelope_id")
);

-- Rate-limit counters of the public operations (rate-limiter-flexible's layout), shared by every replica.
CREATE TABLE "rate_limits" (
    "key" TEXT NOT NULL,
    "points" INTEGER NOT NULL DEFAULT 0,
    "expire" BIGINT,
    CONSTRAINT "rate_limits_pkey" PRIMARY KEY ("key")
);
