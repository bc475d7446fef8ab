import { Elysia } from 'elysia'
// paths (embedded in the single executable like PGlite's files), read when /docs asks: imported
// as text, the 1.7 MB bundle alone kept ~11 MB resident in every server that never shows /docs
import swaggerCssPath from 'swagger-ui-dist/swagger-ui.css' with { type: 'file' }
import swaggerBundlePath from 'swagger-ui-dist/swagger-ui-bundle.js' with { type: 'file' }
import html from './app.html' with { type: 'text' }
import { canvasScript } from './bundle'
import docsInit from './docs-init.js' with { type: 'text' }
import base from './styles/1-base.css' with { type: 'text' }
import canvas from './styles/2-canvas.css' with { type: 'text' }
import views from './styles/3-views.css' with { type: 'text' }
import planning from './styles/4-planning.css' with { type: 'text' }
import phone from './styles/5-phone.css' with { type: 'text' }
import density from './styles/6-density.css' with { type: 'text' }

/** /app/app.css: the stylesheet in its parts (src/web/styles), in cascade order, served as one file. */
const css = [base, canvas, views, planning, phone, density].join('\n')

/**
 * The live canvas at /app?projectId=…: one page, one script, one stylesheet, all served from
 * memory (imported as text, so they travel inside the compiled binary too). The policy allows
 * nothing but those same-origin files and calls to this API: no inline script or style, no
 * other origin. The API key never appears in a URL the server sees (it stays in the page's
 * storage and goes in the Authorization header).
 */
export const APP_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

const headers = (type: string) => ({
  'content-type': type,
  'cache-control': 'no-cache',
  'content-security-policy': APP_CSP,
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
})

/** The brand mark (app.html's), as the icon every browser asks for at /favicon.ico: an answer, not a 404 in its console. */
const FAVICON =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><rect width="24" height="24" rx="5" fill="#15803d"/><path fill="none" stroke="#fff" stroke-width="2" stroke-linecap="round" d="M12 21v-7m0 0-4-4m4 4 4-4M8 10V6m8 4V7"/><circle cx="12" cy="14" r="1.6" fill="#fff"/><circle cx="8" cy="5" r="2" fill="#fff"/><circle cx="16" cy="6" r="2" fill="#fff"/></svg>'

const page = (body: unknown, type: string) => () => new Response(String(body), { headers: headers(type) })
const hidden = { detail: { hide: true } }

/** The guide's address, relative: the JSON answer of GET / names it beside the app and the docs. */
const HOME = { name: 'Arbor', app: '/app', docs: '/docs', api: '/api/v1', guide: '/api/v1/guide', openapi: '/openapi.json' }

/** GET /: a browser (it asks for HTML first) goes to the app; anything else gets where to go, as JSON. */
function home(request: Request): Response {
  const accept = request.headers.get('accept') ?? ''
  const html = accept.indexOf('text/html')
  const json = accept.indexOf('application/json')
  if (html >= 0 && (json < 0 || html < json)) return new Response(null, { status: 303, headers: { location: '/app' } })
  return new Response(JSON.stringify(HOME), { headers: { 'content-type': 'application/json' } })
}

export const webRoutes = () => {
  // bundled once per app, on the first request for it (src/web/bundle.ts)
  let script: Promise<string> | undefined
  return new Elysia({ name: 'web' })
    .get('/', ({ request }) => home(request), {
      detail: {
        summary: 'Where to go: a browser is sent to the app (/app); a JSON client gets the addresses of the app, the docs and the API',
        tags: ['view'],
        security: [],
        responses: {
          200: {
            description: 'the addresses of the app, the docs and the API (a client that does not prefer HTML)',
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  properties: Object.fromEntries(Object.keys(HOME).map((k) => [k, { type: 'string' }])),
                  required: Object.keys(HOME),
                },
              },
            },
          },
          303: { description: 'a browser (Accept prefers text/html) is sent to /app' },
        },
      },
    })
    .get('/app', page(html, 'text/html; charset=utf-8'), {
      detail: {
        summary: 'The live canvas (HTML): /app?projectId=<id>#key=<API key>',
        tags: ['view'],
        security: [],
        responses: { 200: { description: 'the page', content: { 'text/html': { schema: { type: 'string' } } } } },
      },
    })
    .get(
      '/app/app.js',
      async () => {
        script ??= canvasScript().catch((err) => {
          script = undefined
          throw err
        })
        return new Response(await script, { headers: headers('text/javascript; charset=utf-8') })
      },
      hidden,
    )
    .get('/app/app.css', page(css, 'text/css; charset=utf-8'), hidden)
    .get(
      '/favicon.ico',
      () =>
        new Response(FAVICON, {
          headers: { 'content-type': 'image/svg+xml', 'cache-control': 'public, max-age=86400', 'x-content-type-options': 'nosniff' },
        }),
      hidden,
    )
}

/**
 * The API reference at /docs: Swagger UI from the `swagger-ui-dist` package, served from its files
 * (embedded in the compiled binary, so it travels there too and loads nothing from another origin), on /openapi.json.
 * Swagger UI sets inline style attributes, so styles allow 'unsafe-inline'; scripts do not.
 */
export const DOCS_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Arbor API reference</title><link rel="stylesheet" href="/docs/swagger-ui.css"></head>
<body><div id="swagger-ui"></div><script src="/docs/swagger-ui-bundle.js"></script><script src="/docs/init.js"></script></body></html>`

const serve =
  (body: unknown, type: string, file = false) =>
  () =>
    new Response(file ? Bun.file(String(body)) : String(body), {
      headers: {
        'content-type': type,
        'content-security-policy': DOCS_CSP,
        'x-content-type-options': 'nosniff',
        'cache-control': 'no-cache',
      },
    })

export const docsRoutes = () =>
  new Elysia({ name: 'docs' })
    .get('/docs', serve(PAGE, 'text/html; charset=utf-8'), hidden)
    .get('/docs/swagger-ui.css', serve(swaggerCssPath, 'text/css; charset=utf-8', true), hidden)
    .get('/docs/swagger-ui-bundle.js', serve(swaggerBundlePath, 'text/javascript; charset=utf-8', true), hidden)
    .get('/docs/init.js', serve(docsInit, 'text/javascript; charset=utf-8'), hidden)
