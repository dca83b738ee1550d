import express from 'express';
import type { ServiceName } from '@strata/contracts';

/**
 * `{base_url}/docs`: every service's OpenAPI document, fetched from the
 * services (`/openapi.json`), listed in one page and served under
 * `/docs/<service>.json`. Services that are not running are left out.
 */
export function docsRouter(targets: Record<ServiceName, string>): express.Router {
  const router = express.Router();
  router.get('/', async (_req, res) => {
    const available = await Promise.all(
      Object.entries(targets).map(async ([name, url]) => ((await fetchDoc(url)) ? name : undefined)),
    );
    const links = available
      .filter(Boolean)
      .map((n) => `<li><a href="/docs/${n}.json">${n}</a></li>`)
      .join('');
    res.type('html').send(`<!doctype html><html><head><meta charset="utf-8"><title>Strata API</title></head>
<body><h1>Strata API documents</h1><p>OpenAPI 3 documents of the running services:</p><ul>${links}</ul></body></html>`);
  });
  router.get('/:service.json', async (req, res) => {
    const url = targets[req.params['service'] as ServiceName];
    const doc = url ? await fetchDoc(url) : undefined;
    if (!doc) {
      res
        .status(404)
        .json({ error: 'Not Found', message: `No OpenAPI document for '${req.params['service']}'`, code: 'NOT_FOUND' });
      return;
    }
    res.json(doc);
  });
  return router;
}

async function fetchDoc(base: string): Promise<unknown> {
  try {
    const res = await fetch(`${base.replace(/\/$/, '')}/openapi.json`, { signal: AbortSignal.timeout(2000) });
    return res.ok ? await res.json() : undefined;
  } catch {
    return undefined;
  }
}
