-- A seal's documents are kept from the moment they are made until envelopes has them: an attempt that fails after
-- logging them (a crash, envelopes or the database away) is retried with the same bytes, so the transparency log gets
-- each envelope's two leaves once and envelopes hears of one sealed document.
ALTER TABLE "seals" ADD COLUMN "sealed_pdf" BYTEA, ADD COLUMN "certificate_pdf" BYTEA;
