-- The dashboard's recent activity: an organization's newest audit entries in one mode, across its envelopes.
CREATE INDEX "audit_events_organization_id_test_mode_created_at_idx" ON "audit_events"("organization_id", "test_mode", "created_at" DESC);
