export { AuthConfig } from './auth.config.js';
export { createAuthApp, migrateAuth } from './create-auth-app.js';
export { CLI_CLIENT_ID, CLI_REDIRECT_URI } from './oidc/cli-client.js';
export { SigningKeysService } from './oidc/signing-keys.service.js';
export { rotateSigningKey } from './oidc/rotate-signing-key.js';
export { OidcService } from './oidc/oidc.service.js';
export { reencryptAuth, upgradeAuth } from './oidc/reencrypt-keys.js';
export { UsersService } from './users/users.service.js';
