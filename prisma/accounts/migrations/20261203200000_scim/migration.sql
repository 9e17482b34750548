-- SCIM 2.0 provisioning: the organization's bearer token (SHA-256 only), the users and groups its identity provider
-- provisioned, and group memberships (groups named after a role give that role).
CREATE TABLE "scim_tokens" (
    "organization_id" TEXT NOT NULL,
    "token_hash" TEXT NOT NULL,
    "created_by" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_used_at" TIMESTAMPTZ(3),
    CONSTRAINT "scim_tokens_pkey" PRIMARY KEY ("organization_id"),
    CONSTRAINT "scim_tokens_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE UNIQUE INDEX "scim_tokens_token_hash_key" ON "scim_tokens"("token_hash");

CREATE TABLE "scim_users" (
    "id" TEXT NOT NULL,
    "organization_id" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "user_name" TEXT NOT NULL,
    "user_name_key" TEXT NOT NULL,
    "external_id" TEXT,
    "email" TEXT NOT NULL,
    "display_name" TEXT NOT NULL,
    "active" BOOLEAN NOT NULL,
    "resource" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "scim_users_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "scim_users_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "scim_users_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE UNIQUE INDEX "scim_users_organization_id_user_name_key_key" ON "scim_users"("organization_id", "user_name_key");
CREATE UNIQUE INDEX "scim_users_organization_id_user_id_key" ON "scim_users"("organization_id", "user_id");
CREATE INDEX "scim_users_organization_id_external_id_idx" ON "scim_users"("organization_id", "external_id");
CREATE INDEX "scim_users_organization_id_updated_at_id_idx" ON "scim_users"("organization_id", "updated_at" DESC, "id" DESC);

CREATE TABLE "scim_groups" (
    "id" TEXT NOT NULL,
    "organization_id" TEXT NOT NULL,
    "display_name" TEXT NOT NULL,
    "external_id" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "scim_groups_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "scim_groups_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE UNIQUE INDEX "scim_groups_organization_id_display_name_key" ON "scim_groups"("organization_id", "display_name");
CREATE INDEX "scim_groups_organization_id_created_at_id_idx" ON "scim_groups"("organization_id", "created_at", "id");

CREATE TABLE "scim_group_members" (
    "group_id" TEXT NOT NULL,
    "scim_user_id" TEXT NOT NULL,
    CONSTRAINT "scim_group_members_pkey" PRIMARY KEY ("group_id", "scim_user_id"),
    CONSTRAINT "scim_group_members_group_id_fkey" FOREIGN KEY ("group_id") REFERENCES "scim_groups"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "scim_group_members_scim_user_id_fkey" FOREIGN KEY ("scim_user_id") REFERENCES "scim_users"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE INDEX "scim_group_members_scim_user_id_idx" ON "scim_group_members"("scim_user_id");
