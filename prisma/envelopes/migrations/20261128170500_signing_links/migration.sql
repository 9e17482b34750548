-- Always-on signing links and the envelopes created through them.
CREATE TABLE "signing_links" (
    "id" TEXT NOT NULL,
    "organization_id" TEXT NOT NULL,
    "test_mode" BOOLEAN NOT NULL,
    "template_id" TEXT NOT NULL,
    "template_version" INTEGER NOT NULL,
    "role" TEXT NOT NULL,
    "title" TEXT NOT NULL,
    "per_email_per_day" INTEGER NOT NULL,
    "per_ip_per_hour" INTEGER NOT NULL,
    "daily_cap" INTEGER,
    "variables" JSONB NOT NULL DEFAULT '{}',
    "cc" JSONB NOT NULL DEFAULT '[]',
    "recipients" JSONB NOT NULL DEFAULT '[]',
    "visitor_fields" JSONB NOT NULL DEFAULT '[]',
    "status" TEXT NOT NULL,
    "created_by" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "deleted_at" TIMESTAMPTZ(3),

    CONSTRAINT "signing_links_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "signing_links_organization_id_test_mode_created_at_id_idx" ON "signing_links"("organization_id", "test_mode", "created_at", "id");

CREATE TABLE "signing_link_uses" (
    "envelope_id" TEXT NOT NULL,
    "signing_link_id" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "signing_link_uses_pkey" PRIMARY KEY ("envelope_id")
);

CREATE INDEX "signing_link_uses_signing_link_id_created_at_idx" ON "signing_link_uses"("signing_link_id", "created_at");

ALTER TABLE "signing_link_uses" ADD CONSTRAINT "signing_link_uses_signing_link_id_fkey" FOREIGN KEY ("signing_link_id") REFERENCES "signing_links"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
