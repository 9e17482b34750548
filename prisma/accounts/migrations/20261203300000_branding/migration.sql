-- An organization's e-mail branding (one row, made on its first change) and every logo it uploaded (the bytes are in
-- S3; a logo's URL is immutable, so e-mails sent with an earlier logo keep showing it).
CREATE TABLE "email_brandings" (
    "organization_id" TEXT NOT NULL,
    "display_name" TEXT,
    "custom_message" TEXT,
    "footer" TEXT,
    "remove_powered_by" BOOLEAN NOT NULL DEFAULT false,
    "logo_file" TEXT,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "email_brandings_pkey" PRIMARY KEY ("organization_id")
);

CREATE TABLE "organization_logos" (
    "organization_id" TEXT NOT NULL,
    "file" TEXT NOT NULL,
    "content_type" TEXT NOT NULL,
    "size" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "organization_logos_pkey" PRIMARY KEY ("organization_id", "file")
);
