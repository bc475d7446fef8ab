import { Elysia, t } from 'elysia'
import { withUser } from '../accounts/auth'
import type { Deps } from '../deps'
import { RefusalError } from '../errors'
import { ProjectQuery } from '../http/action-schema'
import { documentedBody, documentedQuery } from '../http/documented'
import { MetaBody, RefusalBody as Refusal } from '../http/schemas'
import { CreateShareBody, PublicNode } from './model'
import { PAGE_HEADERS, renderNotFoundPage, renderSharePage } from './page'
import { createShare, listShares, publicView, RevokeQuery, revokeShare } from './service'

const Nullable = <T extends Parameters<typeof t.Union>[0][number]>(s: T) => t.Union([s, t.Null()])

/** /share (owners and members) and the unauthenticated JSON view of a link. */
export const shareRoutes = (deps: Deps) =>
  new Elysia({ name: 'share' })
    // registered before withUser: a share link is read without a key
    .get('/public/share/:token', ({ params }) => publicView(deps, params.token), {
      params: t.Object({ token: t.String() }),
      response: { 200: t.Object({ project: t.Object({ name: t.String() }), nodes: t.Array(PublicNode) }), 404: Refusal },
      detail: { summary: 'The public view of a share link as JSON (no authentication; notes removed)', tags: ['share'], security: [] },
    })
    .derive(withUser(deps))
    .post('/share', async ({ user, body, status }) => status(201, await createShare(deps, user, body)), {
      response: {
        201: t.Object({ token: t.String(), url: t.String(), expiresAt: Nullable(t.String()), _meta: MetaBody }),
        400: Refusal,
        403: Refusal,
        404: Refusal,
      },
      detail: {
        summary: 'Mint a read-only share link ($PUBLIC_BASE_URL/s/<token>)',
        tags: ['share'],
        requestBody: documentedBody(CreateShareBody),
      },
    })
    .get('/share', ({ user, query }) => listShares(deps, user, query), {
      response: {
        200: t.Object({
          tokens: t.Array(
            t.Object({
              token: t.String(),
              url: t.String(),
              settings: t.Unknown(),
              createdAt: t.String(),
              expiresAt: Nullable(t.String()),
              revokedAt: Nullable(t.String()),
              active: t.Boolean({ description: 'false once revoked or expired' }),
            }),
          ),
          _meta: MetaBody,
        }),
        403: Refusal,
        404: Refusal,
      },
      detail: { summary: 'List share links, newest first', tags: ['share'], ...documentedQuery(ProjectQuery) },
    })
    .delete('/share', ({ user, query }) => revokeShare(deps, user, query), {
      response: {
        200: t.Object({ success: t.Literal(true), revoked: Nullable(t.String()), _meta: MetaBody }),
        400: Refusal,
        403: Refusal,
        404: Refusal,
      },
      detail: {
        summary: 'Revoke a share link at once (revoked:null when there was nothing to revoke)',
        tags: ['share'],
        ...documentedQuery(RevokeQuery),
      },
    })

/** GET /s/<token>: the HTML page of a share link, outside /api. */
export const sharePageRoutes = (deps: Deps) =>
  new Elysia({ name: 'share-page' }).get(
    '/s/:token',
    async ({ params }) => {
      try {
        return await publicView(deps, params.token, { render: renderSharePage, headers: PAGE_HEADERS })
      } catch (err) {
        if (err instanceof RefusalError && err.status === 404)
          return new Response(renderNotFoundPage(), { status: 404, headers: PAGE_HEADERS })
        throw err
      }
    },
    {
      detail: {
        summary: 'The public share page (HTML, no authentication)',
        tags: ['share'],
        security: [],
        responses: { 200: { description: 'the page', content: { 'text/html': { schema: { type: 'string' } } } } },
      },
    },
  )
