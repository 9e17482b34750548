-- Viewers become records: each with its e-mailed link token (SHA-256 only) and short-lived access tokens.
CREATE TABLE "envelope_viewers" (
    "id" TEXT NOT NULL,
    "envelope_id" TEXT NOT NULL,
    "organization_id" TEXT NOT NULL,
    "email" TEXT NOT NULL,
    "name" TEXT,
    "document_access" BOOLEAN NOT NULL DEFAULT false,
    "link_token_hash" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "first_opened_at" TIMESTAMPTZ(3),
    "revoked_at" TIMESTAMPTZ(3),

    CONSTRAINT "envelope_viewers_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "viewer_access_tokens" (
    "token_hash" TEXT NOT NULL,
    "viewer_id" TEXT NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "viewer_access_tokens_pkey" PRIMARY KEY ("token_hash")
);

CREATE UNIQUE INDEX "envelope_viewers_link_token_hash_key" ON "envelope_viewers"("link_token_hash");
CREATE INDEX "envelope_viewers_envelope_id_created_at_idx" ON "envelope_viewers"("envelope_id", "created_at");
CREATE INDEX "viewer_access_tokens_viewer_id_idx" ON "viewer_access_tokens"("viewer_id");

ALTER TABLE "envelope_viewers" ADD CONSTRAINT "envelope_viewers_envelope_id_fkey" FOREIGN KEY ("envelope_id") REFERENCES "envelopes"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "viewer_access_tokens" ADD CONSTRAINT "viewer_access_tokens_viewer_id_fkey" FOREIGN KEY ("viewer_id") REFERENCES "envelope_viewers"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- The viewers recorded at creation so far (a JSON column) become rows. They were never e-mailed, so they have no link
-- token; the ids follow the vwr_ pattern (24 characters of the envelope id's alphabet from an md5).
INSERT INTO "envelope_viewers" ("id", "envelope_id", "organization_id", "email", "name", "document_access", "created_at")
SELECT 'vwr_' || substr(md5(e.id || ':' || v.ordinality::text), 1, 24),
       e.id,
       e.organization_id,
       lower(v.value ->> 'email'),
       NULLIF(v.value ->> 'name', ''),
       COALESCE((v.value ->> 'documentAccess')::boolean, false),
       e.created_at
FROM "envelopes" e, jsonb_array_elements(e.viewers) WITH ORDINALITY AS v(value, ordinality)
WHERE jsonb_typeof(e.viewers) = 'array' AND v.value ->> 'email' IS NOT NULL;

ALTER TABLE "envelopes" DROP COLUMN "viewers";
