-- The envelope list filtered by status or by template, newest first (keyset pages), reads one index range.
CREATE INDEX "envelopes_organization_id_test_mode_status_created_at_id_idx" ON "envelopes"("organization_id", "test_mode", "status", "created_at", "id");
CREATE INDEX "envelopes_org_mode_template_created_at_id_idx" ON "envelopes"("organization_id", "test_mode", "template_id", "created_at", "id");
