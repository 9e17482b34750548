/**
 * Where a connection's flows live, all under the gateway's public URL. The SAML entity id is the SP metadata URL
 * (a convention IdPs accept, and it names the organization and the connection, so it is unique).
 */
export function samlServiceProvider(publicUrl: string, organizationId: string, providerId: string) {
  const metadataUrl = `${publicUrl}/v1/auth/sso/saml/metadata/${organizationId}/${providerId}`;
  return { entityId: metadataUrl, acsUrl: `${publicUrl}/v1/auth/sso/saml/acs`, metadataUrl };
}

export const oidcRedirectUri = (publicUrl: string) => `${publicUrl}/v1/auth/sso/oidc/callback`;

export const ssoStartUrl = (publicUrl: string, email: string) => `${publicUrl}/v1/auth/sso/start?email=${encodeURIComponent(email)}`;

export const dashboardUrl = (publicUrl: string) => `${publicUrl}/app/`;

/** The dashboard's sign-in page shows `sso_error` above the form. */
export const signInErrorUrl = (publicUrl: string, message: string) => `${publicUrl}/app/sign-in?sso_error=${encodeURIComponent(message)}`;

export const testStartUrl = (publicUrl: string, providerId: string, testId: string) => `${publicUrl}/v1/sso/connections/${providerId}/tests/${testId}/start`;
