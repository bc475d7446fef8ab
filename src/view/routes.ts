import { Elysia, t } from 'elysia'
import { withUser } from '../accounts/auth'
import type { Deps } from '../deps'
import { documentedBody, documentedQuery } from '../http/documented'
import { MetaBody } from '../http/schemas'
import { CommandsQuery, ReportBody, VIEW_COMMAND_TYPES, ViewCommandBody, ViewStateParams } from './model'
import { nextCommands, reportView, sendCommand, viewState } from './service'

const Mode = t.Union([t.Literal('tree'), t.Literal('matrix')])

/** A command as the app applies it: the caller's fields, checked, and `switchTo` when the view moves to the matrix first. */
const QueuedCommand = t.Object({
  type: t.String({ description: VIEW_COMMAND_TYPES.join(', ') }),
  mode: t.Optional(Mode),
  iterationName: t.Optional(t.String()),
  nodeId: t.Optional(t.String()),
  goalIds: t.Optional(t.Array(t.String())),
  autoSwitch: t.Optional(t.Boolean()),
  switchTo: t.Optional(t.Literal('matrix')),
})

export const ViewState = t.Object({
  view_mode: Mode,
  selected_iteration: t.Nullable(t.String()),
  expanded_nodes: t.Array(t.String()),
  focused_goals: t.Array(t.String()),
  selected_node: t.Nullable(t.String()),
  updated_at: t.Nullable(t.String({ description: 'ISO 8601, when a client last reported its view' })),
  last_applied_command: t.Nullable(t.Object({ id: t.Integer(), type: t.String(), at: t.Nullable(t.String()) })),
  command_seq: t.Integer({ description: 'id of the last applied command (0: none yet)' }),
  clients_connected: t.Boolean({ description: 'a client sent a heartbeat in the last 30 seconds' }),
  last_client_seen: t.Nullable(t.String()),
  _meta: MetaBody,
})

export const viewRoutes = (deps: Deps) =>
  new Elysia({ name: 'view' })
    .derive(withUser(deps))
    .post('/view-command', ({ user, body }) => sendCommand(deps, user, body), {
      response: {
        200: t.Object({
          success: t.Boolean({ description: 'true: enqueued (not yet applied); false: the target did not resolve, nothing enqueued' }),
          command: t.Unknown(),
          commandId: t.Nullable(t.Integer()),
          _meta: MetaBody,
        }),
      },
      detail: {
        summary: 'Drive the live canvas: queue a view command for the app (applied within about 2 s while a client is connected)',
        tags: ['view'],
        requestBody: documentedBody(ViewCommandBody),
      },
    })
    .get('/view-state', ({ user, query }) => viewState(deps, user, query), {
      response: { 200: ViewState },
      detail: {
        summary: 'What the live canvas shows, and the last command it applied',
        tags: ['view'],
        ...documentedQuery(ViewStateParams),
      },
    })
    .get('/view/commands', ({ user, query, request }) => nextCommands(deps, user, query, () => deps.waiters.waited.add(request)), {
      response: {
        200: t.Object({
          commands: t.Array(t.Intersect([QueuedCommand, t.Object({ id: t.Integer(), at: t.Nullable(t.String()) })])),
          revision: t.String({
            description:
              "changes whenever the project's nodes or iterations change (the GET /events cursor of its newest event; '' before any)",
          }),
        }),
      },
      detail: {
        ...documentedQuery(CommandsQuery),
        summary: "The app's own call: heartbeat, then the queued commands after `after`, or a tree change after `revision` (long poll)",
        tags: ['view'],
      },
    })
    .post('/view/report', ({ user, body }) => reportView(deps, user, body), {
      response: { 200: ViewState },
      detail: {
        summary: "The app's own call: what it shows now and the command it just applied (also a heartbeat)",
        tags: ['view'],
        requestBody: documentedBody(ReportBody),
      },
    })
