const escape = (s: string): string =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** The small login page of the interactive flow. Pure: values are escaped. */
export function loginPage(options: { uid: string; email?: string; workspace?: string; error?: string }): string {
  const error = options.error ? `<p class="error" role="alert">${escape(options.error)}</p>` : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Sign in to Strata</title>
<style>body{font-family:system-ui,sans-serif;max-width:22rem;margin:4rem auto;padding:0 1rem}
label{display:block;margin-top:1rem}input{width:100%;padding:.5rem;box-sizing:border-box}
button{margin-top:1.5rem;padding:.6rem 1rem}.error{color:#b00020}</style></head>
<body><h1>Sign in to Strata</h1>${error}
<form method="post" action="/interaction/${escape(options.uid)}/login" autocomplete="on">
<label>Email<input name="email" type="email" required value="${escape(options.email ?? '')}" autofocus></label>
<label>Password<input name="password" type="password" required></label>
<label>Workspace (optional)<input name="workspace" value="${escape(options.workspace ?? '')}" placeholder="acme-prod"></label>
<button type="submit">Sign in</button></form></body></html>`;
}
