-- What e-mails need: organizations' names and members' addresses (from accounts' events), every message sent or
-- suppressed, and each recipient's reminder due time and last link.
CREATE TABLE "organizations" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    CONSTRAINT "organizations_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "organization_members" (
    "member_id" TEXT NOT NULL,
    "organization_id" TEXT NOT NULL,
    "email" TEXT NOT NULL,
    CONSTRAINT "organization_members_pkey" PRIMARY KEY ("member_id")
);
CREATE INDEX "organization_members_organization_id_email_idx" ON "organization_members"("organization_id", "email");

CREATE TABLE "email_deliveries" (
    "id" TEXT NOT NULL,
    "envelope_id" TEXT NOT NULL,
    "recipient_id" TEXT,
    "address" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "message_id" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "email_deliveries_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "email_deliveries_status_check" CHECK ("status" IN ('delivered', 'suppressed'))
);
CREATE INDEX "email_deliveries_envelope_id_created_at_idx" ON "email_deliveries"("envelope_id", "created_at");

ALTER TABLE "recipients" ADD COLUMN "next_reminder_at" TIMESTAMPTZ(3);
ALTER TABLE "recipients" ADD COLUMN "last_link_at" TIMESTAMPTZ(3);
CREATE INDEX "recipients_next_reminder_at_idx" ON "recipients"("next_reminder_at");
