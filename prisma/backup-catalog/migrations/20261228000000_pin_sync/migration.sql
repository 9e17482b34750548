-- A pin changed in the catalog and not yet written to the store (pin.json beside the manifest): the spec's pinSynced is its negation.
ALTER TABLE "backups" ADD COLUMN "pin_sync_pending" BOOLEAN NOT NULL DEFAULT false;
