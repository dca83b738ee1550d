#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { DEFAULT_URLS, LoginError, loginWithPassword } from '@strata/sdk';

const USAGE = `usage: strata login --email EMAIL --password PASSWORD [--workspace SLUG]

Logs in (authorization code + PKCE, no browser) and prints the access token.
Environment: STRATA_AUTH_URL (default ${DEFAULT_URLS.authUrl}), STRATA_BASE_URL (default ${DEFAULT_URLS.baseUrl}).`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command !== 'login') {
    process.stderr.write(`${USAGE}\n`);
    return command === '--help' || command === '-h' ? 0 : 2;
  }
  let values: { email?: string | undefined; password?: string | undefined; workspace?: string | undefined };
  try {
    ({ values } = parseArgs({
      args: rest,
      options: { email: { type: 'string' }, password: { type: 'string' }, workspace: { type: 'string' } },
      strict: true,
    }));
  } catch (err) {
    process.stderr.write(`strata: ${(err as Error).message}\n${USAGE}\n`);
    return 2;
  }
  if (!values.email || !values.password) {
    process.stderr.write(`strata: --email and --password are required\n${USAGE}\n`);
    return 2;
  }
  try {
    const tokens = await loginWithPassword({
      authUrl: process.env['STRATA_AUTH_URL'] ?? DEFAULT_URLS.authUrl,
      email: values.email,
      password: values.password,
      workspace: values.workspace,
    });
    process.stdout.write(`${tokens.accessToken}\n`);
    return 0;
  } catch (err) {
    const message =
      err instanceof LoginError ? err.message : `cannot reach the auth service: ${(err as Error).message}`;
    process.stderr.write(`strata: ${message}\n`);
    return 1;
  }
}

process.exitCode = await main(process.argv.slice(2));
