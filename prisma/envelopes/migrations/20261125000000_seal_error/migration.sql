-- Why the seal failed (evidence reports it after its retries; a later successful seal clears it).
ALTER TABLE "envelopes" ADD COLUMN "seal_error" TEXT;

-- What a completion e-mail carried: `sealed` (the sealed PDF and the certificate) or `completed` (the completed
-- document, when sealing had failed); null for other e-mails.
ALTER TABLE "email_deliveries" ADD COLUMN "attachments" TEXT;
