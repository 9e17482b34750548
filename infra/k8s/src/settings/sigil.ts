/** Settings of Sigil's services (each service's `src/config.ts` is the source; the docs here are its comments). */
import { serviceUrlOf } from '../overlay.ts';
import type { Setting } from './shared.ts';
import { baseSettings, config, fixed, internalPrivateKey, keep, mailSettings, mallocArenas, s3Settings, secret, SECRETS } from './shared.ts';

const publicUrl = (doc: string): Setting => ({ name: 'PUBLIC_URL', doc, source: config((overlay) => overlay.publicUrl) });
const urlOf = (name: string, service: 'billing' | 'templates' | 'accounts' | 'envelopes', doc: string): Setting => ({ name, doc, source: config((overlay) => serviceUrlOf(overlay, service)) });

export const accountsSettings: Setting[] = [
  ...baseSettings('accounts'),
  { name: 'SIGN_IN_LIMIT_PER_EMAIL_IP', doc: 'Sign-in attempts per e-mail and IP per 15 minutes (default in throttle.ts).', source: keep('throttle.ts') },
  { name: 'SIGN_IN_LIMIT_PER_IP', doc: 'Sign-in attempts per IP per 15 minutes.', source: keep('throttle.ts') },
  { name: 'SIGN_UP_LIMIT_PER_IP', doc: 'Sign-ups per IP per hour.', source: keep('throttle.ts') },
  { name: 'ACCEPT_INVITATION_LIMIT_PER_IP', doc: 'Invitation acceptances per IP per hour.', source: keep('throttle.ts') },
  publicUrl("The gateway's public URL: invitation e-mails link to the dashboard's accept page there."),
  urlOf('BILLING_URL', 'billing', 'The billing service (plan entitlements for SSO, SCIM and branding).'),
  internalPrivateKey(),
  { name: 'SSO_ALLOWED_ORIGINS', doc: 'Origins an IdP may use beside public https (comma-separated); local clusters allow loopback.', source: config((overlay) => overlay.localOrigins || undefined) },
  { name: 'SSO_SECRETS_KEY', doc: 'Seals OIDC client secrets (32 bytes, base64); without it a key is derived from INTERNAL_JWT_PRIVATE_KEY.', source: secret(SECRETS.ssoSecretsKey, 'key', 'REPLACE+WITH+32+RANDOM+BYTES+IN+BASE64+ABCDEF=', true) },
  ...mailSettings('invitations'),
  ...s3Settings('logos', 'organization logos'),
  mallocArenas,
];

export const billingSettings: Setting[] = [
  ...baseSettings('billing'),
  { name: 'PROCESSOR_SECRET_KEY', doc: "The payment processor's secret API key.", source: secret(SECRETS.processor, 'secret-key', 'sk_test_REPLACE_ME') },
  { name: 'PROCESSOR_WEBHOOK_SECRET', doc: 'The secret the processor signs its webhooks with (`whsec_…`).', source: secret(SECRETS.processor, 'webhook-secret', 'whsec_REPLACE_ME') },
  { name: 'PROCESSOR_API_URL', doc: "Where the processor's API answers; empty: the real processor (the SDK's default).", source: keep('') },
  { name: 'DASHBOARD_URL', doc: "The dashboard's public address: upgrade links and checkout's return addresses.", source: config((overlay) => `${overlay.publicUrl}/app`) },
  { name: 'METER_REPORT_INTERVAL_MS', doc: 'How often metered usage is reported to the processor.', source: keep('60000') },
  { name: 'USAGE_CONCURRENCY', doc: 'Completion events counted at once by one replica.', source: keep('32') },
  mallocArenas,
];

export const templatesSettings: Setting[] = [
  ...baseSettings('templates'),
  ...s3Settings('templates', 'template files'),
  { name: 'TEMPLATE_FILE_MAX_BYTES', doc: 'Largest upload, in bytes (413 above it).', source: keep('26214400') },
  { name: 'TEMPLATE_FILE_MAX_PAGES', doc: 'Most pages of an uploaded document.', source: keep('500') },
  { name: 'CONVERSION_WORKERS', doc: 'LibreOffice conversions at once (each a child process within the container\'s memory limit).', source: fixed('2') },
  { name: 'CONVERSION_TIMEOUT_MS', doc: 'How long one conversion may take.', source: keep('60000') },
  { name: 'CHROMIUM_PATH', doc: "Debian's Chromium, which prints document-mode bodies (in the image).", source: keep('/usr/bin/chromium') },
  { name: 'HOME', doc: 'LibreOffice writes its profile under HOME: a writable emptyDir.', source: fixed('/tmp'), runtime: true },
  mallocArenas,
];

export const envelopesSettings: Setting[] = [
  ...baseSettings('envelopes'),
  ...s3Settings('envelopes', 'envelope documents'),
  urlOf('TEMPLATES_URL', 'templates', 'The templates service (version snapshots, recorded uses, version PDFs).'),
  urlOf('BILLING_URL', 'billing', "The billing service (the organization's entitlements, checked before a send)."),
  urlOf('ACCOUNTS_URL', 'accounts', "The accounts service (the organization's e-mail branding)."),
  internalPrivateKey(),
  { name: 'ENVELOPE_DEFAULT_EXPIRY_DAYS', doc: "An envelope's lifetime when the request names no expiresAt.", source: keep('30') },
  { name: 'RENDER_CONCURRENCY', doc: 'Renders at once in one process.', source: keep('2') },
  { name: 'SESSION_TTL_SECONDS', doc: 'Lifetime of a signing session minted through the API.', source: keep('300') },
  publicUrl('The public base URL of the hosted signing page, for e-mailed links.'),
  ...mailSettings("recipients' e-mails"),
  { name: 'SCHEDULER_INTERVAL_MS', doc: 'How often due work (expiry) is looked for.', source: keep('5000') },
  mallocArenas,
];

export const signingSettings: Setting[] = [
  ...baseSettings('signing'),
  urlOf('ENVELOPES_URL', 'envelopes', 'The envelopes service (token exchange, signer view and document, submit, decline).'),
  urlOf('ACCOUNTS_URL', 'accounts', "The accounts service (the organization's e-mail branding and logo)."),
  internalPrivateKey(),
  { name: 'ACCESS_TOKEN_TTL_SECONDS', doc: "Lifetime of a signer's access token.", source: keep('1800') },
  ...s3Settings('attachments', "signers' attachments"),
  ...mailSettings('one-time codes'),
  { name: 'SMS_PROVIDER', doc: 'One-time codes by SMS: `inbox` (into the SMTP inbox) or `http` (a Twilio-style REST API).', source: keep('inbox') },
  { name: 'SMS_API_URL', doc: 'The SMS API (with SMS_PROVIDER=http).', source: keep('unset') },
  { name: 'SMS_ACCOUNT_ID', doc: 'The SMS account.', source: keep('unset') },
  { name: 'SMS_AUTH_TOKEN', doc: 'The SMS API token (put it in a Secret when used).', source: keep('unset') },
  { name: 'SMS_FROM', doc: 'The SMS sender.', source: keep('unset') },
  { name: 'ATTACHMENT_MAX_BYTES', doc: 'The largest attachment, in bytes.', source: keep('10485760') },
  mallocArenas,
];

export const evidenceSettings: Setting[] = [
  ...baseSettings('evidence'),
  urlOf('ENVELOPES_URL', 'envelopes', 'The envelopes service (completed documents to seal, and where sealed ones go).'),
  internalPrivateKey(),
  { name: 'SEAL_KEY_PEM', doc: 'The sealing identity: an RSA key (PKCS#8 PEM)…', source: secret(SECRETS.sealing, 'key-pem', '-----BEGIN PRIVATE KEY-----\nREPLACE\n-----END PRIVATE KEY-----') },
  { name: 'SEAL_CERT_PEM', doc: '…and its certificate chain (PEM, signing certificate first).', source: secret(SECRETS.sealing, 'cert-pem', '-----BEGIN CERTIFICATE-----\nREPLACE\n-----END CERTIFICATE-----') },
  { name: 'SEAL_P12_BASE64', doc: 'Or a PKCS#12 file (base64) instead of the two PEMs.', source: keep('unset') },
  { name: 'SEAL_P12_PASSWORD', doc: "The PKCS#12 file's password.", source: keep('') },
  { name: 'TSA_URL', doc: 'An RFC 3161 timestamp authority: with it, seals are PAdES B-T.', source: keep('unset') },
  { name: 'ANCHOR_SIGNING_KEY', doc: "The transparency log's anchor key (C2SP signed-note signer key `PRIVATE+KEY+…`).", source: secret(SECRETS.sealing, 'anchor-signing-key', 'PRIVATE+KEY+sigil.example.com/anchors+REPLACE') },
  { name: 'ANCHOR_INTERVAL_MS', doc: 'At most one anchor per log per interval.', source: keep('15000') },
  publicUrl('Where the public reaches Sigil: names the logs (checkpoint origins) and goes on certificates.'),
  { name: 'RATE_LIMIT_VERIFY_PER_MINUTE', doc: 'Verifications per client per minute.', source: keep('60') },
  { name: 'RATE_LIMIT_PUBLIC_PER_MINUTE', doc: 'Public log reads per client per minute.', source: keep('240') },
  mallocArenas,
];

export const webhooksSettings: Setting[] = [
  ...baseSettings('webhooks'),
  { name: 'WEBHOOK_SECRETS_KEY', doc: 'Seals endpoint secrets at rest: 32 bytes, base64.', source: secret(SECRETS.webhookSecretsKey, 'key', 'REPLACE+WITH+32+RANDOM+BYTES+IN+BASE64+ABCDEF=') },
  { name: 'WEBHOOK_ALLOWED_ORIGINS', doc: 'Origins allowed besides public https (comma-separated); local clusters allow loopback receivers.', source: config((overlay) => overlay.localOrigins || undefined) },
  { name: 'WEBHOOK_CONCURRENCY', doc: 'Attempts in flight at once in one process.', source: keep('64') },
  { name: 'WEBHOOK_PER_ENDPOINT_CONCURRENCY', doc: 'At most this many attempts to any one endpoint.', source: keep('4') },
  { name: 'WEBHOOK_TIMEOUT_MS', doc: "The receiver's time to answer (spec: 10 s).", source: keep('10000') },
  mallocArenas,
];
