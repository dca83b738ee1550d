import { loadConfigOrExit, reencryptCommand } from '@strata/platform';
import { AuthConfig } from './auth.config.js';
import { createAuthApp, migrateAuth } from './create-auth-app.js';

/**
 * `node dist/main.js [migrate | upgrade | rotate-signing-key | reencrypt [--check]]`: serve, only
 * run the migrations, add a signing key, or move every stored secret to the active
 * encryption key (docs/runbooks.md).
 */
export async function run(argv: string[] = process.argv.slice(2)): Promise<void> {
  const config = loadConfigOrExit(AuthConfig, 'strata-auth');
  if (argv[0] === 'migrate') {
    const ran = await migrateAuth(config);
    process.stdout.write(`strata-auth: ${ran.length ? `ran ${ran.join(', ')}` : 'schema iam is up to date'}\n`);
    return;
  }
  if (argv[0] === 'upgrade') {
    const { upgradeAuth } = await import('./oidc/reencrypt-keys.js');
    await upgradeAuth(config);
    return;
  }
  if (argv[0] === 'reencrypt') {
    const { reencryptAuth } = await import('./oidc/reencrypt-keys.js');
    await reencryptCommand('strata-auth', config, argv, (options) => reencryptAuth(config, options));
    return;
  }
  if (argv[0] === 'rotate-signing-key') {
    const { rotateSigningKey } = await import('./oidc/rotate-signing-key.js');
    await rotateSigningKey(config);
    return;
  }
  const app = await createAuthApp(config);
  await app.listen(config.AUTH_PORT, config.HOST);
}
