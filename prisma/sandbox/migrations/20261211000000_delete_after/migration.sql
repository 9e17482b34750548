-- A sandbox deleted as soon as its restore finished (verification restores).
ALTER TABLE "sandboxes" ADD COLUMN "delete_after" BOOLEAN NOT NULL DEFAULT false;
