-- The outbox keeps insertion order (also within one transaction), and the relay publishes in it.
ALTER TABLE "outbox_events" ADD COLUMN "position" BIGSERIAL NOT NULL;
CREATE INDEX "outbox_events_published_at_position_idx" ON "outbox_events"("published_at", "position");
