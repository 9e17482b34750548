-- The dashboard path a sign-in with SSO lands on (GET /v1/auth/sso/start?next=).
ALTER TABLE "sso_login_states" ADD COLUMN "return_to" TEXT;
