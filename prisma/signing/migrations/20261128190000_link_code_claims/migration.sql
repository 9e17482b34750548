-- A sender claims a due code for a while, keeps its hash (committed, so a visitor who reads the e-mail at once can
-- verify), then mails it; a claim left by a sender that stopped expires and the code is made again.
ALTER TABLE "link_verifications" ADD COLUMN "code_claimed_until" TIMESTAMPTZ(3);
