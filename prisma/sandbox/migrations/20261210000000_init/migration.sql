-- Platform tables (kit): idempotency keys, transactional outbox, consumer inbox.
CREATE TABLE "idempotency_keys" (
    "scope" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "request_hash" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "locked_until" TIMESTAMPTZ(3),
    "response_status" INTEGER,
    "response_headers" JSONB,
    "response_body" JSONB,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "idempotency_keys_pkey" PRIMARY KEY ("scope","key")
);
CREATE INDEX "idempotency_keys_expires_at_idx" ON "idempotency_keys"("expires_at");

CREATE TABLE "outbox_events" (
    "id" TEXT NOT NULL,
    "position" BIGSERIAL NOT NULL,
    "subject" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "published_at" TIMESTAMPTZ(3),
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "last_error" TEXT,
    CONSTRAINT "outbox_events_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "outbox_events_published_at_created_at_idx" ON "outbox_events"("published_at", "created_at");
CREATE INDEX "outbox_events_published_at_position_idx" ON "outbox_events"("published_at", "position");

CREATE TABLE "processed_messages" (
    "consumer" TEXT NOT NULL,
    "message_id" TEXT NOT NULL,
    "processed_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "processed_messages_pkey" PRIMARY KEY ("consumer","message_id")
);

-- Sandboxes.
CREATE TABLE "sandboxes" (
    "id" TEXT NOT NULL,
    "namespace" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "engine" TEXT NOT NULL,
    "phase" TEXT NOT NULL,
    "message" TEXT NOT NULL DEFAULT '',
    "owner" TEXT NOT NULL DEFAULT '',
    "target_namespace" TEXT NOT NULL,
    "target_name" TEXT NOT NULL,
    "backup_id" TEXT NOT NULL DEFAULT '',
    "restore_name" TEXT NOT NULL DEFAULT '',
    "restore_id" TEXT NOT NULL DEFAULT '',
    "data_time" TIMESTAMPTZ(3),
    "major" INTEGER NOT NULL DEFAULT 0,
    "databases" TEXT[],
    "database" TEXT NOT NULL DEFAULT '',
    "host" TEXT NOT NULL DEFAULT '',
    "port" INTEGER,
    "username" TEXT NOT NULL DEFAULT '',
    "sealed_password" TEXT NOT NULL DEFAULT '',
    "size_limit_bytes" BIGINT NOT NULL,
    "used_bytes" BIGINT NOT NULL DEFAULT 0,
    "ttl_seconds" INTEGER NOT NULL,
    "extensions" JSONB NOT NULL DEFAULT '[]',
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "max_ttl_seconds" INTEGER NOT NULL,
    "expose" BOOLEAN NOT NULL DEFAULT false,
    "masks" TEXT[],
    "post_restore_sql" TEXT[],
    "runtime" JSONB NOT NULL DEFAULT '{}',
    "reset_generation" INTEGER NOT NULL DEFAULT 0,
    "observed_reset" INTEGER NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "ready_at" TIMESTAMPTZ(3),
    "ended_at" TIMESTAMPTZ(3),
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "sandboxes_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "sandboxes_namespace_name_key" ON "sandboxes"("namespace", "name");
CREATE INDEX "sandboxes_phase_expires_at_idx" ON "sandboxes"("phase", "expires_at");
