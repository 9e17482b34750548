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

ALTER TABLE "outbox_events" ADD COLUMN "position" BIGSERIAL NOT NULL;
CREATE INDEX "outbox_events_published_at_position_idx" ON "outbox_events"("published_at", "position");

-- One organization's plan and subscription; no row means Free, never subscribed. state_at: the processor's time of
-- the subscription state applied last (an older event arriving later changes nothing).
CREATE TABLE "billing_accounts" (
    "organization_id" TEXT NOT NULL,
    "plan" TEXT NOT NULL DEFAULT 'free',
    "status" TEXT NOT NULL DEFAULT 'active',
    "customer_id" TEXT,
    "subscription_id" TEXT,
    "current_period_start" TIMESTAMPTZ(3),
    "current_period_end" TIMESTAMPTZ(3),
    "cancel_at_period_end" BOOLEAN NOT NULL DEFAULT false,
    "payment_method" JSONB,
    "state_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "billing_accounts_pkey" PRIMARY KEY ("organization_id")
);
CREATE UNIQUE INDEX "billing_accounts_customer_id_key" ON "billing_accounts"("customer_id");
CREATE UNIQUE INDEX "billing_accounts_subscription_id_key" ON "billing_accounts"("subscription_id");

-- Counted usage, one row per counted thing: the key makes redelivery, replay and a second replica count nothing.
CREATE TABLE "usage_records" (
    "meter" TEXT NOT NULL,
    "subject" TEXT NOT NULL,
    "organization_id" TEXT NOT NULL,
    "occurred_at" TIMESTAMPTZ(3) NOT NULL,
    "counted_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "usage_records_pkey" PRIMARY KEY ("meter","subject")
);
CREATE INDEX "usage_records_organization_id_meter_occurred_at_idx" ON "usage_records"("organization_id", "meter", "occurred_at");

-- Metered usage reported to the processor: the running total per organization, period and meter.
CREATE TABLE "meter_reports" (
    "organization_id" TEXT NOT NULL,
    "period_start" TIMESTAMPTZ(3) NOT NULL,
    "meter" TEXT NOT NULL,
    "reported" INTEGER NOT NULL DEFAULT 0,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "meter_reports_pkey" PRIMARY KEY ("organization_id","period_start","meter")
);

-- The processor's webhook events already handled.
CREATE TABLE "processor_events" (
    "id" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "received_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "processor_events_pkey" PRIMARY KEY ("id")
);
