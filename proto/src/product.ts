/**
 * Every product word that appears inside an identifier, a header, a path or a
 * token prefix. Change the product's name here and nowhere else (the OpenAPI
 * document and the event schemas repeat these literals; proto's tests check
 * they agree with this constant).
 */
export const SIGIL = {
  name: 'Sigil',
  keyPrefixLive: 'sgl_live_',
  keyPrefixTest: 'sgl_test_',
  sessionTokenPrefix: 'sgls_',
  accessTokenPrefix: 'sgla_',
  viewerLinkTokenPrefix: 'sglv_',
  viewerAccessTokenPrefix: 'sglva_',
  webhookUserAgent: 'Sigil-Webhooks/1',
  keysPath: '/.well-known/sigil/keys.json',
  sessionCookie: 'sigil_session',
  problemsBaseUrl: 'https://sigil.dev/problems',
} as const;

export type SigilProduct = typeof SIGIL;
