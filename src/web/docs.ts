import { Elysia } from 'elysia'
import css from 'swagger-ui-dist/swagger-ui.css' with { type: 'text' }
import bundle from 'swagger-ui-dist/swagger-ui-bundle.js' with { type: 'text' }
import init from './docs-init.js' with { type: 'text' }

/**
 * The API reference at /docs: Swagger UI from the `swagger-ui-dist` package, served from memory
 * (so it travels in the compiled binary and loads nothing from another origin), on /openapi.json.
 * Swagger UI sets inline style attributes, so styles allow 'unsafe-inline'; scripts do not.
 */
export const DOCS_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Arbor API reference</title><link rel="stylesheet" href="/docs/swagger-ui.css"></head>
<body><div id="swagger-ui"></div><script src="/docs/swagger-ui-bundle.js"></script><script src="/docs/init.js"></script></body></html>`

const serve = (body: unknown, type: string) => () =>
  new Response(String(body), {
    headers: {
      'content-type': type,
      'content-security-policy': DOCS_CSP,
      'x-content-type-options': 'nosniff',
      'cache-control': 'no-cache',
    },
  })
const hidden = { detail: { hide: true } }

export const docsRoutes = () =>
  new Elysia({ name: 'docs' })
    .get('/docs', serve(PAGE, 'text/html; charset=utf-8'), hidden)
    .get('/docs/swagger-ui.css', serve(css, 'text/css; charset=utf-8'), hidden)
    .get('/docs/swagger-ui-bundle.js', serve(bundle, 'text/javascript; charset=utf-8'), hidden)
    .get('/docs/init.js', serve(init, 'text/javascript; charset=utf-8'), hidden)
