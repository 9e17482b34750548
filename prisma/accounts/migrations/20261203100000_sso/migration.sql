-- SAML and OIDC single sign-on: connections, their domains, logins in flight, SAML request IDs, consumed assertions
-- (replay), test logins.
CREATE TABLE "sso_connections" (
    "id" TEXT NOT NULL,
    "organization_id" TEXT NOT NULL,
    "provider_id" TEXT NOT NULL,
    "protocol" TEXT NOT NULL,
    "enforced" BOOLEAN NOT NULL DEFAULT false,
    "default_role" TEXT NOT NULL DEFAULT 'member',
    "jit_provisioning" BOOLEAN NOT NULL DEFAULT false,
    "idp_metadata_xml" TEXT,
    "idp_metadata_url" TEXT,
    "idp_entity_id" TEXT,
    "idp_sso_url" TEXT,
    "idp_certificates" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[],
    "oidc_issuer" TEXT,
    "oidc_client_id" TEXT,
    "oidc_client_secret_sealed" TEXT,
    "last_success_at" TIMESTAMPTZ(3),
    "last_error" TEXT,
    "last_error_at" TIMESTAMPTZ(3),
    "certificate_expires_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "sso_connections_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "sso_connections_organization_id_provider_id_key" ON "sso_connections"("organization_id", "provider_id");

CREATE TABLE "sso_domains" (
    "domain" TEXT NOT NULL,
    "connection_id" TEXT NOT NULL,
    CONSTRAINT "sso_domains_pkey" PRIMARY KEY ("domain"),
    CONSTRAINT "sso_domains_connection_id_fkey" FOREIGN KEY ("connection_id") REFERENCES "sso_connections"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE INDEX "sso_domains_connection_id_idx" ON "sso_domains"("connection_id");

CREATE TABLE "sso_login_states" (
    "state_hash" TEXT NOT NULL,
    "connection_id" TEXT NOT NULL,
    "purpose" TEXT NOT NULL,
    "test_id" TEXT,
    "saml_request_id" TEXT,
    "code_verifier" TEXT,
    "nonce" TEXT,
    "browser_hash" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "consumed_at" TIMESTAMPTZ(3),
    CONSTRAINT "sso_login_states_pkey" PRIMARY KEY ("state_hash"),
    CONSTRAINT "sso_login_states_connection_id_fkey" FOREIGN KEY ("connection_id") REFERENCES "sso_connections"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE INDEX "sso_login_states_expires_at_idx" ON "sso_login_states"("expires_at");

CREATE TABLE "sso_saml_requests" (
    "id" TEXT NOT NULL,
    "value" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "sso_saml_requests_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "sso_saml_requests_created_at_idx" ON "sso_saml_requests"("created_at");

CREATE TABLE "sso_assertions" (
    "id" TEXT NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "sso_assertions_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "sso_assertions_expires_at_idx" ON "sso_assertions"("expires_at");

CREATE TABLE "sso_tests" (
    "id" TEXT NOT NULL,
    "connection_id" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "reason" TEXT,
    "reason_code" TEXT,
    "attributes" JSONB NOT NULL DEFAULT '{}',
    "created_by" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "completed_at" TIMESTAMPTZ(3),
    CONSTRAINT "sso_tests_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "sso_tests_connection_id_fkey" FOREIGN KEY ("connection_id") REFERENCES "sso_connections"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE INDEX "sso_tests_connection_id_created_at_idx" ON "sso_tests"("connection_id", "created_at");
