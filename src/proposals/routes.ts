import { Elysia, t } from 'elysia'
import { withUser } from '../accounts/auth'
import type { User } from '../accounts/model'
import type { Deps } from '../deps'
import { ProjectQuery } from '../http/action-schema'
import { documentedPathQuery, documentedQuery } from '../http/documented'
import { MetaBody } from '../http/schemas'
import { MAX_LIMIT, PROPOSAL_STATUSES, ProposalOut, type ProposalRead, ProposalReadOut } from './model'
import { listProposals } from './service'

/** The fresh preview and conflicts of one proposal: the batch's dry run, handed in by app.ts (src/mutate/proposals.ts). */
export type ReadProposal = (deps: Deps, user: User, query: unknown, proposalId: string) => Promise<ProposalRead>

/** GET /proposals and GET /proposals/:proposalId (live.md §5). */
export const proposalRoutes = (deps: Deps, read: ReadProposal) =>
  new Elysia({ name: 'proposals' })
    .derive(withUser(deps))
    .get('/proposals', ({ user, query }) => listProposals(deps, user, query), {
      response: {
        200: t.Object({
          proposals: t.Array(ProposalOut, { description: 'newest first' }),
          next: t.Optional(t.String({ description: 'pass as after for the next page' })),
          _meta: MetaBody,
        }),
      },
      detail: {
        summary: "The project's proposals, newest first (live.md §5)",
        tags: ['proposals'],
        ...documentedQuery(
          t.Object({
            projectId: t.String(),
            status: t.Optional(
              t.Union(
                PROPOSAL_STATUSES.map((s) => t.Literal(s)),
                { description: `only these: ${PROPOSAL_STATUSES.join(', ')}` },
              ),
            ),
            after: t.Optional(t.String({ description: 'the next value of the previous page' })),
            limit: t.Optional(t.Integer({ minimum: 1, maximum: MAX_LIMIT, description: `1 to ${MAX_LIMIT} (default 20)` })),
          }),
        ),
      },
    })
    .get('/proposals/:proposalId', ({ user, query, params }) => read(deps, user, query, params.proposalId), {
      response: {
        200: t.Object({
          proposal: ProposalReadOut,
          _meta: MetaBody,
        }),
      },
      detail: {
        summary: 'One proposal, with a fresh preview and its conflicts (live.md §5)',
        tags: ['proposals'],
        ...documentedPathQuery(ProjectQuery),
      },
    })
