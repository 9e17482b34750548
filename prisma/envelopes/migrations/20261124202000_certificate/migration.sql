-- The certificate of completion, made and signed by the evidence service with the seal.
ALTER TABLE "envelopes" ADD COLUMN "certificate_key" TEXT;
