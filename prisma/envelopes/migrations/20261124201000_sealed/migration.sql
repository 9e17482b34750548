-- The sealed document, made by the evidence service and kept with the envelope.
ALTER TABLE "envelopes" ADD COLUMN "sealed_key" TEXT;
ALTER TABLE "envelopes" ADD COLUMN "sealed_sha256" TEXT;
ALTER TABLE "envelopes" ADD COLUMN "sealed_at" TIMESTAMPTZ(3);
