-- Sign-in attempt limits, and the member list's order.
CREATE TABLE "auth_throttles" (
    "key" TEXT NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "auth_throttles_pkey" PRIMARY KEY ("key")
);
CREATE INDEX "auth_throttles_expires_at_idx" ON "auth_throttles"("expires_at");

CREATE INDEX "memberships_organization_id_created_at_id_idx" ON "memberships"("organization_id", "created_at", "id");
