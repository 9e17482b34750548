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
    "subject" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "published_at" TIMESTAMPTZ(3),
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "last_error" TEXT,
    CONSTRAINT "outbox_events_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "outbox_events_published_at_created_at_idx" ON "outbox_events"("published_at", "created_at");

CREATE TABLE "processed_messages" (
    "consumer" TEXT NOT NULL,
    "message_id" TEXT NOT NULL,
    "processed_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "processed_messages_pkey" PRIMARY KEY ("consumer","message_id")
);

CREATE TABLE "resources" (
    "kind" TEXT NOT NULL,
    "namespace" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "uid" TEXT NOT NULL,
    "generation" INTEGER NOT NULL DEFAULT 1,
    "spec" JSONB NOT NULL,
    "status" JSONB NOT NULL DEFAULT '{}',
    "metadata" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "resources_pkey" PRIMARY KEY ("kind","namespace","name")
);
CREATE UNIQUE INDEX "resources_uid_key" ON "resources"("uid");

CREATE TABLE "secrets" (
    "namespace" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "sealed" TEXT NOT NULL,
    "keys" TEXT[],
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "secrets_pkey" PRIMARY KEY ("namespace","name")
);

CREATE TABLE "backups" (
    "id" TEXT NOT NULL,
    "namespace" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "target_name" TEXT NOT NULL,
    "store" TEXT NOT NULL,
    "policy" TEXT NOT NULL,
    "engine" TEXT NOT NULL,
    "host" TEXT NOT NULL DEFAULT '',
    "phase" TEXT NOT NULL,
    "message" TEXT NOT NULL DEFAULT '',
    "reason" TEXT NOT NULL DEFAULT '',
    "requested_by" TEXT NOT NULL DEFAULT '',
    "priority" INTEGER NOT NULL DEFAULT 0,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "mirrored" BOOLEAN NOT NULL DEFAULT false,
    "queued_at" TIMESTAMPTZ(3) NOT NULL,
    "started_at" TIMESTAMPTZ(3),
    "completed_at" TIMESTAMPTZ(3),
    "manifest_key" TEXT,
    "manifest" JSONB,
    "progress" JSONB,
    "raw_bytes" BIGINT NOT NULL DEFAULT 0,
    "stored_bytes" BIGINT NOT NULL DEFAULT 0,
    "pinned" BOOLEAN NOT NULL DEFAULT false,
    "pin_reason" TEXT,
    "pinned_by" TEXT,
    "pin_expires" TIMESTAMPTZ(3),
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "backups_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "backups_namespace_name_key" ON "backups"("namespace", "name");
CREATE INDEX "backups_namespace_target_name_queued_at_idx" ON "backups"("namespace", "target_name", "queued_at");
CREATE INDEX "backups_phase_priority_queued_at_idx" ON "backups"("phase", "priority", "queued_at");

CREATE TABLE "restores" (
    "id" TEXT NOT NULL,
    "namespace" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "target_namespace" TEXT NOT NULL,
    "target_name" TEXT NOT NULL,
    "backup_id" TEXT NOT NULL,
    "mode" TEXT NOT NULL,
    "phase" TEXT NOT NULL,
    "message" TEXT NOT NULL DEFAULT '',
    "reason" TEXT NOT NULL DEFAULT '',
    "requested_by" TEXT NOT NULL DEFAULT '',
    "destination" JSONB NOT NULL DEFAULT '{}',
    "download_url" TEXT,
    "download_expires" TIMESTAMPTZ(3),
    "progress" JSONB,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "started_at" TIMESTAMPTZ(3),
    "completed_at" TIMESTAMPTZ(3),
    CONSTRAINT "restores_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "restores_namespace_name_key" ON "restores"("namespace", "name");
CREATE INDEX "restores_created_at_idx" ON "restores"("created_at");

CREATE TABLE "audit_events" (
    "id" BIGSERIAL NOT NULL,
    "time" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "user" TEXT NOT NULL,
    "role" TEXT NOT NULL,
    "action" TEXT NOT NULL,
    "target" TEXT NOT NULL DEFAULT '',
    "object" TEXT NOT NULL DEFAULT '',
    "outcome" TEXT NOT NULL,
    "from" TEXT NOT NULL DEFAULT '',
    "detail" JSONB NOT NULL DEFAULT '{}',
    CONSTRAINT "audit_events_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "audit_events_time_idx" ON "audit_events"("time");

CREATE TABLE "catalog_state" (
    "id" INTEGER NOT NULL DEFAULT 1,
    "version" BIGINT NOT NULL DEFAULT 0,
    CONSTRAINT "catalog_state_pkey" PRIMARY KEY ("id")
);
INSERT INTO "catalog_state" ("id", "version") VALUES (1, 0);
