-- The live envelopes an organization completed in a billing period, counted before a send on a plan without overage.
CREATE INDEX "envelopes_organization_id_test_mode_completed_at_idx" ON "envelopes"("organization_id", "test_mode", "completed_at");
