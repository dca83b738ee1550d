import express, { type Request } from 'express';
import { getAbsoluteFSPath } from 'swagger-ui-dist';
import { ErrorCode, type ServiceName } from '@strata/contracts';
import { renderError, requestIdOf } from '@strata/platform';

/** Swagger UI's own files, served from the swagger-ui-dist package (no CDN: clusters may be offline). */
const SWAGGER_UI_FILES = ['swagger-ui.css', 'swagger-ui-bundle.js', 'swagger-ui-standalone-preset.js'];

/**
 * `{base_url}/docs`: every service's OpenAPI document, fetched from the
 * services (`/openapi.json`), served under `/docs/<service>.json` and shown
 * together in Swagger UI (one entry per service in its top bar). Services that
 * are not running are left out.
 */
export function docsRouter(targets: Record<ServiceName, string>): express.Router {
  const router = express.Router();
  const assets = getAbsoluteFSPath();
  for (const file of SWAGGER_UI_FILES) {
    router.get(`/ui/${file}`, (_req, res) => res.sendFile(file, { root: assets, maxAge: '1d' }));
  }
  router.get('/', async (_req, res) => {
    const available = (
      await Promise.all(Object.entries(targets).map(async ([name, url]) => ((await fetchDoc(url)) ? name : undefined)))
    ).filter((n): n is string => n !== undefined);
    res.type('html').send(page(available));
  });
  router.get('/:service.json', async (req, res) => {
    const service = req.params['service'] ?? '';
    const url = targets[service as ServiceName];
    const doc = url ? await fetchDoc(url) : undefined;
    if (!doc) {
      res.status(404).json(notFound(req, `No OpenAPI document for '${service}'`));
      return;
    }
    res.json(doc);
  });
  return router;
}

function notFound(req: Request, message: string) {
  return renderError('general', { status: 404, code: ErrorCode.NOT_FOUND, message, requestId: requestIdOf(req) });
}

function page(services: string[]): string {
  const urls = JSON.stringify(services.map((name) => ({ name, url: `/docs/${name}.json` })));
  const links = services.map((n) => `<li><a href="/docs/${n}.json">${n}</a></li>`).join('');
  return `<!doctype html>
<html>
<head>
<meta charset="utf-8">
<title>Strata API</title>
<link rel="stylesheet" href="/docs/ui/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"><noscript><h1>Strata API documents</h1><ul>${links}</ul></noscript></div>
<script src="/docs/ui/swagger-ui-bundle.js"></script>
<script src="/docs/ui/swagger-ui-standalone-preset.js"></script>
<script>
window.ui = SwaggerUIBundle({
  urls: ${urls},
  dom_id: '#swagger-ui',
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
  layout: 'StandaloneLayout',
});
</script>
</body>
</html>`;
}

async function fetchDoc(base: string): Promise<unknown> {
  try {
    const res = await fetch(`${base.replace(/\/$/, '')}/openapi.json`, { signal: AbortSignal.timeout(2000) });
    return res.ok ? await res.json() : undefined;
  } catch {
    return undefined;
  }
}
