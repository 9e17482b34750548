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

CREATE TABLE "envelopes" (
    "id" TEXT NOT NULL,
    "organization_id" TEXT NOT NULL,
    "test_mode" BOOLEAN NOT NULL,
    "status" TEXT NOT NULL,
    "seal" TEXT NOT NULL DEFAULT 'not_started',
    "template_id" TEXT NOT NULL,
    "template_version" INTEGER NOT NULL,
    "template_name" TEXT NOT NULL,
    "external_id" TEXT,
    "metadata" JSONB NOT NULL DEFAULT '{}',
    "variables" JSONB NOT NULL DEFAULT '{}',
    "fields" JSONB NOT NULL,
    "pages" JSONB NOT NULL,
    "cc" JSONB NOT NULL DEFAULT '[]',
    "viewers" JSONB NOT NULL DEFAULT '[]',
    "reminders" JSONB,
    "created_by" JSONB NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "original_key" TEXT,
    "original_sha256" TEXT,
    "render_attempts" INTEGER NOT NULL DEFAULT 0,
    "render_error" TEXT,
    "void_reason" TEXT,
    "sent_at" TIMESTAMPTZ(3),
    "completed_at" TIMESTAMPTZ(3),
    "ended_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "envelopes_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "envelopes_status_check" CHECK ("status" IN ('rendering', 'sent', 'completed', 'declined', 'voided', 'expired')),
    CONSTRAINT "envelopes_seal_check" CHECK ("seal" IN ('not_started', 'pending', 'sealed', 'failed'))
);
CREATE INDEX "envelopes_organization_id_test_mode_created_at_id_idx" ON "envelopes"("organization_id", "test_mode", "created_at", "id");
CREATE INDEX "envelopes_organization_id_test_mode_external_id_idx" ON "envelopes"("organization_id", "test_mode", "external_id");
CREATE INDEX "envelopes_status_expires_at_idx" ON "envelopes"("status", "expires_at");

CREATE TABLE "recipients" (
    "id" TEXT NOT NULL,
    "envelope_id" TEXT NOT NULL,
    "role" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "email" TEXT NOT NULL,
    "phone" TEXT,
    "delivery" TEXT NOT NULL,
    "verification" TEXT NOT NULL,
    "routing_order" INTEGER NOT NULL,
    "position" INTEGER NOT NULL,
    "status" TEXT NOT NULL,
    "values" JSONB,
    "decline_reason" TEXT,
    "sent_at" TIMESTAMPTZ(3),
    "viewed_at" TIMESTAMPTZ(3),
    "completed_at" TIMESTAMPTZ(3),
    "declined_at" TIMESTAMPTZ(3),
    CONSTRAINT "recipients_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "recipients_status_check" CHECK ("status" IN ('pending', 'sent', 'viewed', 'completed', 'declined'))
);
CREATE UNIQUE INDEX "recipients_envelope_id_role_key" ON "recipients"("envelope_id", "role");
CREATE INDEX "recipients_email_idx" ON "recipients"("email");
ALTER TABLE "recipients" ADD CONSTRAINT "recipients_envelope_id_fkey" FOREIGN KEY ("envelope_id") REFERENCES "envelopes"("id") ON DELETE CASCADE ON UPDATE CASCADE;

CREATE TABLE "envelope_dedupe_keys" (
    "organization_id" TEXT NOT NULL,
    "test_mode" BOOLEAN NOT NULL,
    "external_id" TEXT NOT NULL,
    "envelope_id" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "envelope_dedupe_keys_pkey" PRIMARY KEY ("organization_id","test_mode","external_id")
);
