// A real OpenID provider (oidc-provider) on 127.0.0.1 for the authorization tests.
//
//   node oidc_provider.mjs PORT RESOURCE [RESOURCE ...]
//
// Issuer http://127.0.0.1:PORT. Access tokens for any RESOURCE are JWTs (RFC 9068) with that
// resource as their audience (RFC 8707) and the scopes "tools" and "admin" available.
// Clients: "service" (client_credentials, client_secret_basic, secret "service-secret");
// "app" (a public client: authorization code with PKCE, loopback redirects, refresh tokens).
// Other clients may register themselves (Dynamic Client Registration).
// Users log in through the provider's own development pages (any login name, no password);
// the login name is the subject, with the e-mail address LOGIN@example.com, the name "Login"
// and the groups ["staff", "LOGIN-team"] (scopes email, profile and groups).
// Prints "ready" on stdout once it listens.
import { generateKeyPairSync } from 'node:crypto';
import Provider from 'oidc-provider';

const [port, ...resources] = process.argv.slice(2);
const issuer = `http://127.0.0.1:${port}`;
const signing = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' });

const provider = new Provider(issuer, {
  jwks: { keys: [{ ...signing, kid: 'test-rsa', use: 'sig', alg: 'RS256' }] },
  clients: [
    {
      client_id: 'service',
      client_secret: 'service-secret',
      grant_types: ['client_credentials'],
      response_types: [],
      redirect_uris: [],
      scope: 'tools admin',
    },
    {
      client_id: 'app',
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      redirect_uris: ['http://127.0.0.1/callback'],
      scope: 'openid offline_access tools admin',
    },
  ],
  scopes: ['openid', 'offline_access', 'tools', 'admin'],
  claims: { email: ['email', 'email_verified'], profile: ['name'], groups: ['groups'] },
  findAccount: (ctx, id) => ({
    accountId: id,
    claims: () => ({
      sub: id,
      email: `${id}@example.com`,
      email_verified: true,
      name: id.charAt(0).toUpperCase() + id.slice(1),
      groups: ['staff', `${id}-team`],
    }),
  }),
  pkce: { required: () => true },
  features: {
    clientCredentials: { enabled: true },
    introspection: { enabled: true },
    revocation: { enabled: true },
    registration: { enabled: true },
    devInteractions: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: (ctx, client, oneOf) => oneOf ?? resources[0],
      useGrantedResource: () => true,
      getResourceServerInfo: (ctx, resource) => {
        if (!resources.includes(resource)) throw new Provider.errors.InvalidTarget();
        return { scope: 'tools admin', audience: resource, accessTokenTTL: 600, accessTokenFormat: 'jwt' };
      },
    },
  },
  ttl: { AccessToken: 600, ClientCredentials: 600 },
  // Refresh tokens to every client allowed the grant (oidc-provider's default wants offline_access
  // with prompt=consent, as OpenID Connect does; many authorization servers need neither).
  issueRefreshToken: (ctx, client) => client.grantTypeAllowed('refresh_token'),
});
provider.proxy = false;
provider.listen(Number(port), '127.0.0.1', () => console.log('ready'));
