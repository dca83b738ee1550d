/** The first-party public client the `strata` CLI logs in with (authorization code + PKCE). */
export const CLI_CLIENT_ID = 'strata-cli';
/** A loopback redirect: the CLI reads the code from the redirect instead of listening. */
export const CLI_REDIRECT_URI = 'http://127.0.0.1/callback';
