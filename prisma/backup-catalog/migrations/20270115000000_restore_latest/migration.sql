-- Whether a restore was asked for `at: latest` (RestoreSource.latest): the request is not kept, and the plan alone
-- cannot say it (with change capture, `latest` is planned as the end of the newest window, a time like any other).
ALTER TABLE "restores" ADD COLUMN "latest" BOOLEAN NOT NULL DEFAULT false;

-- Restores made before: a plan without targetTime was made for latest without change capture (a moment asked always
-- lands in targetTime). A latest restore of a target with change capture cannot be told from one asked for the
-- window's end, and stays false.
UPDATE "restores" SET "latest" = true WHERE "plan" IS NOT NULL AND NOT ("plan" ? 'targetTime');
