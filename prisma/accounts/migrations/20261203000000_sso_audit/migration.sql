-- The SSO and SCIM administration trail, newest first per organization.
CREATE TABLE "sso_audit_events" (
    "id" TEXT NOT NULL,
    "organization_id" TEXT NOT NULL,
    "action" TEXT NOT NULL,
    "actor_type" TEXT NOT NULL,
    "actor_id" TEXT,
    "subject" TEXT,
    "provider_id" TEXT,
    "outcome" TEXT NOT NULL DEFAULT 'success',
    "reason" TEXT,
    "details" JSONB NOT NULL DEFAULT '{}',
    "ip" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "sso_audit_events_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "sso_audit_events_organization_id_created_at_id_idx" ON "sso_audit_events"("organization_id", "created_at" DESC, "id" DESC);
