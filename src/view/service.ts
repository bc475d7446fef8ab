import type { User } from '../accounts/model'
import type { Deps } from '../deps'
import { RefusalError } from '../errors'
import { latestCursor } from '../events/service'
import { eventsKey, viewKey, waitFor } from '../events/waiters'
import { afterAccess } from '../http/action-schema'
import { projectIterations } from '../iterations/service'
import { nodeTypesOf } from '../nodes/service'
import { requireProject } from '../projects/access'
import { tierStatus } from '../tiers/service'
import {
  CONNECTED_MS,
  CommandBody,
  CommandsQuery,
  type QueuedCommand,
  ReportBody,
  type ViewCommandType,
  type ViewName,
  ViewStateQuery,
} from './model'
import * as q from './queries'

/** The most goals one focusGoals command names (a project's goals are far fewer; the bound keeps one command's work small). */
export const MAX_FOCUS_GOALS = 1000
/**
 * The project, when the key may use the live canvas on it: `has_realtime` of tier-status
 * (builder and team). On a project owned by a team plan every member has it, as with the rest
 * of a team project's features (share management follows the same rule).
 */
async function canvasProject(deps: Deps, user: User, projectId: unknown) {
  const access = await requireProject(deps, user, projectId)
  const p = access.project
  const teamProject = p.owner_tier === 'team' && !p.owner_lapsed && !p.owner_contributor
  if (!teamProject && !tierStatus(deps.config, user).has_realtime)
    throw new RefusalError(403, 'realtime_unavailable', {
      message: 'The live canvas and view commands need the Builder or Team plan (has_realtime in GET /tier-status)',
    })
  return access
}

/** The view a request names (its schema's `view`, one of VIEW_NAMES): `app` when it names none. */
const viewOf = (view: ViewName | undefined): ViewName => view ?? 'app'

/** The view's name in a sentence: "app" as docs/reference/view.md words it, "chat view" for the other. */
const named = (view: ViewName) => (view === 'app' ? 'app' : `${view} view`)

/** Where a person sees the view: the canvas's address, or the chat that opened the plan. */
const whereShown = (deps: Deps, projectId: string, view: ViewName) =>
  view === 'app' ? `${deps.config.publicBaseUrl}/app?projectId=${projectId}` : 'the plan in the chat (the MCP tool open_plan)'

/** A command whose target does not resolve: 200 with success:false, nothing enqueued (docs/reference/view.md). */
const unresolved = (command: unknown, tip: string) => ({ success: false, command, commandId: null, _meta: { _tip: tip } })

const str = (v: unknown): v is string => typeof v === 'string' && v.trim() !== ''

/** POST /view-command: check the command, resolve its target, queue it for the app. */
export async function sendCommand(deps: Deps, user: User, raw: unknown) {
  const { project, input: body } = await afterAccess((id) => canvasProject(deps, user, id), 'body', CommandBody, raw)
  const view = viewOf(body.view)
  const c = body.command as Record<string, unknown> & { type: ViewCommandType }
  const queued: QueuedCommand = { type: c.type }
  switch (c.type) {
    case 'setViewMode':
      queued.mode = c.mode as 'tree' | 'matrix' // CommandBody checked it
      break
    case 'selectIteration': {
      if (!str(c.iterationName)) return unresolved(c, 'selectIteration needs iterationName: the name of an iteration (GET /iterations).')
      // any iteration that exists, done ones included (the matrix shows a selected done iteration)
      const iterations = await projectIterations(deps, project.id)
      if (!iterations.some((it) => it.name === c.iterationName))
        return unresolved(
          c,
          `No iteration is named ${JSON.stringify(c.iterationName)}; there are: ${iterations.map((it) => it.name).join(', ')}.`,
        )
      queued.iterationName = c.iterationName as string
      break
    }
    case 'focusGoals': {
      const ids = c.goalIds
      if (!Array.isArray(ids) || ids.length === 0 || !ids.every(str))
        return unresolved(c, 'focusGoals needs goalIds: a non-empty array of goal ids (GET /nodes?type=goal).')
      const unique = [...new Set(ids)]
      if (unique.length > MAX_FOCUS_GOALS)
        return unresolved(c, `focusGoals takes at most ${MAX_FOCUS_GOALS} distinct goal ids; ${unique.length} were sent.`)
      const types = await nodeTypesOf(deps.db, project.id, unique)
      const wrong = unique.filter((id) => types.get(id) !== 'goal')
      if (wrong.length)
        return unresolved(
          c,
          `Not goals of this project: ${wrong.slice(0, 10).join(', ')}${wrong.length > 10 ? ` and ${wrong.length - 10} more` : ''}. Read the goal ids with GET /nodes?type=goal.`,
        )
      queued.goalIds = unique
      break
    }
    default: {
      // the node commands; selectNode without nodeId deselects
      if (c.type === 'selectNode' && (c.nodeId === undefined || c.nodeId === null)) break
      if (!str(c.nodeId)) return unresolved(c, `${c.type} needs nodeId: the id of a node of this project.`)
      const type = (await nodeTypesOf(deps.db, project.id, [c.nodeId])).get(c.nodeId)
      if (!type) return unresolved(c, `Node ${c.nodeId} not found in this project.`)
      queued.nodeId = c.nodeId
      if (c.autoSwitch === false) queued.autoSwitch = false
      else if ((c.type === 'selectNode' || c.type === 'zoomToNode') && (type === 'job' || type === 'task')) queued.switchTo = 'matrix'
    }
  }
  const now = deps.now()
  const commandId = await q.enqueue(deps.db, project.id, view, queued, now)
  // the view's long poll hears it at once, on whichever replica it waits
  await deps.waiters.signal(deps.db, viewKey(project.id))
  const state = await q.getState(deps.db, project.id, view)
  const connected = isConnected(state?.last_client_seen ?? null, now)
  return {
    success: true,
    command: queued,
    commandId,
    _meta: {
      _tip: connected
        ? `A connected ${named(view)} applies it within about 2 seconds: GET /view-state${view === 'app' ? '' : `?view=${view}`} until last_applied_command.id is ${commandId}.`
        : `No ${named(view)} is connected: the command waits in the queue and is applied in order when ${whereShown(deps, project.id, view)} opens.`,
      ...(queued.switchTo ? { autoSwitch: 'The view switches to matrix for a job or task; send autoSwitch:false to stay.' } : {}),
    },
  }
}

const isConnected = (seen: Date | string | null, now: Date) => !!seen && now.getTime() - new Date(seen).getTime() <= CONNECTED_MS
const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString())

/** GET /view-state: what the app shows, as it last reported it; the defaults before any client. */
export async function viewState(deps: Deps, user: User, raw: unknown) {
  const { project, input: query } = await afterAccess((id) => canvasProject(deps, user, id), 'query', ViewStateQuery, raw)
  const view = viewOf(query.view)
  const row = await q.getState(deps.db, project.id, view)
  const now = deps.now()
  const connected = isConnected(row?.last_client_seen ?? null, now)
  const last = row?.last_applied ?? null
  return {
    view_mode: row?.view_mode ?? 'tree',
    selected_iteration: row?.selected_iteration ?? null,
    expanded_nodes: row?.expanded_nodes ?? [],
    focused_goals: row?.focused_goals ?? [],
    selected_node: row?.selected_node ?? null,
    updated_at: iso(row?.updated_at ?? null),
    last_applied_command: last ? { id: Number(last.id), type: last.type, at: iso(last.at) } : null,
    command_seq: Number(row?.command_seq ?? 0),
    clients_connected: connected,
    last_client_seen: iso(row?.last_client_seen ?? null),
    _meta: connected
      ? {}
      : { _tip: `No ${named(view)} is connected: open ${whereShown(deps, project.id, view)} to apply queued commands.` },
  }
}

/**
 * GET /view/commands (the app's own call): a heartbeat, then the commands after `after`, waiting
 * up to `wait` ms for one to arrive. With `revision` (the one its previous answer carried) it
 * also answers as soon as the project's tree or iterations changed, so one long poll keeps the
 * page live without a second polling loop. While it waits it reads nothing: it sits in the
 * waiter list (src/events/waiters.ts) until a command is queued or a write commits for the
 * project, on any replica, and then reads once.
 */
export async function nextCommands(
  deps: Deps,
  user: User,
  raw: Record<string, string>,
  /** told when the poll goes to sleep (only then does the rate limit leave it uncounted) */
  sleeping: () => void = () => {},
) {
  const { project, input: query } = await afterAccess((id) => canvasProject(deps, user, id), 'query', CommandsQuery, raw)
  const view = viewOf(query.view)
  const after = query.after === undefined ? 0 : Number(query.after)
  const wait = query.wait === undefined ? 0 : Number(query.wait)
  // one heartbeat per poll: a poll waits at most POLL_WAIT_MS, well inside the connected window
  await q.heartbeat(deps.db, project.id, view, deps.now())
  // the polls one commit wakes with the same view and `after` read once and send the same bytes, serialised once
  const page = () =>
    deps.waiters.shared(`view\n${project.id}\n${view}\n${after}`, async () => {
      const rows = await q.pending(deps.db, project.id, view, after)
      const revision = await latestCursor(deps, project.id)
      const answer = { commands: rows.map((r) => ({ id: Number(r.seq), ...r.command, at: iso(r.created_at) })), revision }
      return { rows, revision, body: new Blob([JSON.stringify(answer)]) }
    })
  let last: Awaited<ReturnType<typeof page>> | undefined
  const read = async () => {
    last = await page()
    const changed = query.revision !== undefined && last.revision !== query.revision
    return last.rows.length || changed ? last : null
  }
  // a tree change matters only to a poll that sent the revision it shows
  const keys = query.revision === undefined ? [viewKey(project.id)] : [viewKey(project.id), eventsKey(project.id)]
  const found = (await waitFor(deps.waiters, keys, Date.now() + wait, read, sleeping)) ?? last ?? (await page())
  // the page reloads the plan when the revision is new to it (its first read has none): this
  // replica answers that reload from no earlier than the revision sent (src/reads/cache.ts)
  if (found.revision !== query.revision) deps.reads.sawCommit(project.id)
  return new Response(found.body, { headers: { 'content-type': 'application/json;charset=utf-8' } })
}

/** POST /view/report (the app's own call): what it shows now, the command it just applied, and a heartbeat. */
export async function reportView(deps: Deps, user: User, raw: unknown) {
  const { project, input: body } = await afterAccess((id) => canvasProject(deps, user, id), 'body', ReportBody, raw)
  const view = viewOf(body.view)
  const applied = body.applied ?? null
  await deps.db.tx(async (db) => {
    await q.report(db, project.id, view, deps.now(), {
      appliedId: applied?.id ?? null,
      appliedType: applied?.type ?? null,
      viewMode: body.state.view_mode,
      selectedIteration: body.state.selected_iteration,
      expandedNodes: body.state.expanded_nodes,
      focusedGoals: body.state.focused_goals,
      selectedNode: body.state.selected_node,
    })
    if (applied) await q.prune(db, project.id, view, applied.id)
  })
  return viewState(deps, user, { projectId: project.id, view })
}
