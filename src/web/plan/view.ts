/**
 * The plan view (MCP App, ui://arbor/plan.html): the tree of a project inside a chat host. It
 * talks only to its host, through the ext-apps `App` (postMessage); the host forwards its tool
 * calls to Arbor's MCP server, whose app-only tools are REST calls. Bundled into the one HTML
 * document by src/web/plan-bundle.ts.
 */
import { App, applyDocumentTheme, applyHostFonts, applyHostStyleVariables, type McpUiHostContext } from '@modelcontextprotocol/ext-apps'

interface PlanNode {
  id: string
  type: string
  parentId: string | null
  data: { label?: string; status?: string | null; [k: string]: unknown }
}
interface Command {
  id: number
  type: string
  nodeId?: string
  mode?: string
  goalIds?: string[]
  iterationName?: string
}
interface Undo {
  label: string
  restore: { changelogId: number; depth: number }[]
}

const CHILD: Record<string, string> = { goal: 'need', need: 'approach', approach: 'job' }
const TOP = new Set(['goal', 'task'])

const app = new App({ name: 'arbor-plan', version: '1' }, {}, { autoResize: true })
const state = {
  projectId: '',
  rootId: '' as string,
  nodes: new Map<string, PlanNode>(),
  expanded: new Set<string>(),
  selected: null as string | null,
  mode: 'tree',
  editing: null as string | null,
  after: 0,
  revision: undefined as string | undefined,
  undo: [] as Undo[],
  started: false,
  /** the live feed and reports: off when the plan has no live canvas (a free plan, 403 realtime_unavailable) */
  live: true,
}

const $ = <T extends HTMLElement>(sel: string) => document.querySelector(sel) as T
const el = (tag: string, attrs: Record<string, string> = {}, text = '') => {
  const e = document.createElement(tag)
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v)
  if (text) e.textContent = text
  return e
}
const say = (msg: string) => {
  $('#status').textContent = msg
}

async function call<T>(name: string, args: Record<string, unknown>): Promise<T> {
  const res = await app.callServerTool({ name, arguments: { projectId: state.projectId, ...args } })
  const text = res.content?.find((c) => c.type === 'text')
  if (res.isError) {
    const body = text && 'text' in text ? safeJson(text.text) : null
    throw Object.assign(new Error(body?.message ?? body?.error ?? 'the tool failed'), { code: body?.error })
  }
  return (res.structuredContent ?? safeJson(text && 'text' in text ? text.text : '{}')) as T
}
const safeJson = (s: string): Record<string, string> | null => {
  try {
    return JSON.parse(s)
  } catch {
    return null
  }
}

const kids = (id: string | null) =>
  [...state.nodes.values()].filter((n) => (id === null ? n.parentId === null && TOP.has(n.type) : n.parentId === id))
const roots = () => (state.rootId && state.nodes.has(state.rootId) ? [state.nodes.get(state.rootId)!] : kids(null))

/** The items a person can reach now, in reading order. */
function visible(): { node: PlanNode; level: number }[] {
  const out: { node: PlanNode; level: number }[] = []
  const walk = (n: PlanNode, level: number) => {
    out.push({ node: n, level })
    if (state.expanded.has(n.id)) for (const k of kids(n.id)) walk(k, level + 1)
  }
  for (const r of roots()) walk(r, 1)
  return out
}

function render() {
  const tree = $('#tree')
  // a redraw (a change made elsewhere, from the live feed) keeps the keyboard in the tree
  const hadFocus = tree.contains(document.activeElement)
  tree.replaceChildren()
  const items = visible()
  if (!items.length) tree.append(el('div', { class: 'empty' }, 'Nothing planned yet: press a to add a goal.'))
  if (state.selected && !items.some((i) => i.node.id === state.selected)) state.selected = items[0]?.node.id ?? null
  for (const { node, level } of items) {
    const has = kids(node.id).length > 0
    const li = el('div', {
      role: 'treeitem',
      id: `n-${node.id}`,
      'data-id': node.id,
      'aria-level': String(level),
      'aria-selected': String(node.id === state.selected),
      tabindex: node.id === (state.selected ?? items[0]?.node.id) ? '0' : '-1',
    })
    if (has) li.setAttribute('aria-expanded', String(state.expanded.has(node.id)))
    li.style.paddingInlineStart = `${(level - 1) * 1.2 + 0.4}rem`
    li.append(el('span', { class: 'twisty', 'aria-hidden': 'true' }, has ? (state.expanded.has(node.id) ? '▾' : '▸') : '·'))
    li.append(el('span', { class: `type t-${node.type}` }, node.type))
    if (state.editing === node.id) {
      const input = el('input', { 'aria-label': 'Label', value: node.data.label ?? '' }) as HTMLInputElement
      input.addEventListener('keydown', (e) => {
        e.stopPropagation()
        if (e.key === 'Enter') void rename(node, input.value)
        if (e.key === 'Escape') {
          state.editing = null
          render()
          focusSelected()
        }
      })
      li.append(input)
      queueMicrotask(() => input.focus())
    } else li.append(el('span', { class: `label${node.data.status === 'done' ? ' done' : ''}` }, node.data.label ?? node.id))
    if (node.data.status === 'done') li.append(el('span', { class: 'badge' }, 'done'))
    li.addEventListener('click', () => select(node.id))
    tree.append(li)
  }
  if (hadFocus && !state.editing) focusSelected()
  document.body.dataset.mode = state.mode
  $('#mode').textContent = state.mode === 'matrix' ? 'Matrix (asked by the agent)' : ''
}

const focusSelected = () => document.getElementById(`n-${state.selected}`)?.focus()

/** Select an item, and tell the model what the person looks at (ui/update-model-context). */
function select(id: string | null, tellModel = true) {
  state.selected = id
  render()
  focusSelected()
  const n = id ? state.nodes.get(id) : undefined
  $('#ask').toggleAttribute('disabled', !n)
  if (!tellModel) return
  void app
    .updateModelContext({
      content: [
        {
          type: 'text',
          text: n ? `The user selected ${n.type} ${n.id} “${n.data.label}” in the plan view.` : 'Nothing is selected in the plan view.',
        },
      ],
      structuredContent: { projectId: state.projectId, selectedNode: n ? { id: n.id, type: n.type, label: n.data.label } : null },
    })
    .catch((err: Error) => say(`The host did not take the selection: ${err.message}`))
  void report(null)
}

async function load() {
  const { nodes } = await call<{ nodes: PlanNode[] }>('plan_read', {})
  state.nodes = new Map(nodes.map((n) => [n.id, n]))
  if (!state.expanded.size) for (const r of roots()) state.expanded.add(r.id)
  render()
}

async function write(body: Record<string, unknown>) {
  try {
    return await call<Record<string, unknown>>('plan_edit', { idempotencyKey: crypto.randomUUID(), ...body })
  } catch (err) {
    say(`Not saved: ${(err as Error).message}`)
    return null
  }
}

async function rename(n: PlanNode, label: string) {
  state.editing = null
  if (!label.trim() || label === n.data.label) return render()
  const res = await write({ action: 'update', nodeId: n.id, data: { label: label.trim() } })
  if (res?.node) state.nodes.set(n.id, res.node as PlanNode)
  render()
  focusSelected()
  if (res) say(`Renamed to “${label.trim()}”.`)
}

async function toggleDone(n: PlanNode) {
  if (n.type !== 'job' && n.type !== 'task') return say('Only jobs and tasks are done or open.')
  const res = await write({ action: 'update', nodeId: n.id, data: { status: n.data.status === 'done' ? null : 'done' } })
  if (res?.node) state.nodes.set(n.id, res.node as PlanNode)
  render()
  focusSelected()
}

async function add(parent: PlanNode | null) {
  const type = parent ? CHILD[parent.type] : 'goal'
  if (!type) return say(`A ${parent?.type} has no children.`)
  const res = await write({ action: 'add', node: { type, parentId: parent?.id ?? null, data: { label: `New ${type}` } } })
  const node = res?.node as PlanNode | undefined
  if (!node) return
  state.nodes.set(node.id, node)
  if (parent) state.expanded.add(parent.id)
  state.selected = node.id
  state.editing = node.id
  render()
}

/** Delete a node and what is beneath it, deepest first, so the undo restores each from the changelog. */
async function remove(n: PlanNode) {
  const depth = new Map<string, number>([[n.id, 0]])
  const order: PlanNode[] = []
  const walk = (x: PlanNode) => {
    order.push(x)
    for (const k of kids(x.id)) {
      depth.set(k.id, (depth.get(x.id) ?? 0) + 1)
      walk(k)
    }
  }
  walk(n)
  const res = await write({ action: 'batch', mutations: order.reverse().map((x) => ({ action: 'delete', nodeId: x.id })) })
  if (!res) return
  const results = (res.results ?? []) as { nodeId: string; changelogId: number }[]
  state.undo.push({
    label: n.data.label ?? n.id,
    restore: results.map((r) => ({ changelogId: r.changelogId, depth: depth.get(r.nodeId) ?? 0 })).sort((a, b) => a.depth - b.depth),
  })
  const items = visible()
  const i = items.findIndex((x) => x.node.id === n.id)
  for (const x of order) state.nodes.delete(x.id)
  state.selected = items[i + 1]?.node.id ?? items[i - 1]?.node.id ?? null
  render()
  focusSelected()
  say(`Deleted “${n.data.label}”. Ctrl+Z brings it back.`)
}

async function undoLast() {
  const u = state.undo.pop()
  if (!u) return say('Nothing to undo.')
  for (const d of [...new Set(u.restore.map((r) => r.depth))]) {
    const restored = await Promise.all(
      u.restore.filter((r) => r.depth === d).map((r) => write({ action: 'restore', changelogId: r.changelogId })),
    )
    for (const r of restored) if (r?.node) state.nodes.set((r.node as PlanNode).id, r.node as PlanNode)
  }
  render()
  say(`Restored “${u.label}”.`)
}

function onKey(e: KeyboardEvent) {
  // Ctrl+Z is the document's (below), so it works wherever the focus is outside a text field
  if (state.editing || e.ctrlKey || e.metaKey) return
  const items = visible()
  const i = items.findIndex((x) => x.node.id === state.selected)
  const n = items[i]?.node
  const move = (j: number) => items[j] && select(items[j].node.id)
  switch (e.key) {
    case 'ArrowDown':
      move(Math.min(i + 1, items.length - 1))
      break
    case 'ArrowUp':
      move(Math.max(i - 1, 0))
      break
    case 'Home':
      move(0)
      break
    case 'End':
      move(items.length - 1)
      break
    case 'ArrowRight':
      if (n && kids(n.id).length && !state.expanded.has(n.id)) {
        state.expanded.add(n.id)
        select(n.id, false)
      } else if (n && state.expanded.has(n.id)) move(i + 1)
      break
    case 'ArrowLeft':
      if (n && state.expanded.has(n.id)) {
        state.expanded.delete(n.id)
        select(n.id, false)
      } else if (n?.parentId && state.nodes.has(n.parentId)) select(n.parentId)
      break
    case 'Enter':
    case 'F2':
      if (n) {
        state.editing = n.id
        render()
      }
      break
    case 'x':
      if (n) void toggleDone(n)
      break
    case 'a':
      void add(n ?? null)
      break
    case 'A':
      void add(n?.parentId ? (state.nodes.get(n.parentId) ?? null) : null)
      break
    case 'Delete':
    case 'Backspace':
      if (n) void remove(n)
      break
    default:
      return
  }
  e.preventDefault()
}

/** Apply one command of set_view view:"chat", as /app applies its own. */
function apply(c: Command) {
  const reveal = (id: string) => {
    for (let p = state.nodes.get(id)?.parentId; p; p = state.nodes.get(p)?.parentId ?? null) state.expanded.add(p)
  }
  switch (c.type) {
    case 'setViewMode':
      state.mode = c.mode ?? 'tree'
      break
    case 'selectNode':
    case 'zoomToNode':
      if (c.nodeId) reveal(c.nodeId)
      state.selected = c.nodeId ?? null
      break
    case 'expandNode':
      if (c.nodeId) state.expanded.add(c.nodeId)
      break
    case 'collapseNode':
      if (c.nodeId) state.expanded.delete(c.nodeId)
      break
    case 'expandAll':
      for (const n of state.nodes.values()) state.expanded.add(n.id)
      break
    case 'focusGoals':
      for (const g of c.goalIds ?? []) state.expanded.add(g)
      break
  }
  render()
  document.getElementById(`n-${state.selected}`)?.scrollIntoView({ block: 'nearest' })
}

async function report(applied: Command | null) {
  if (!state.live) return
  await call('plan_report', {
    ...(applied ? { applied: { id: applied.id, type: applied.type } } : {}),
    state: {
      view_mode: state.mode,
      selected_iteration: null,
      expanded_nodes: [...state.expanded].slice(0, 1000),
      focused_goals: [],
      selected_node: state.selected,
    },
  }).catch((err: Error) => say(`Could not report the view: ${err.message}`))
}

/** One long poll at a time: the agent's commands for this view, and changes of the tree. */
async function follow() {
  for (;;) {
    try {
      // the first call answers at once with the revision the view shows; later ones wait for a change after it
      const { commands, revision } = await call<{ commands: Command[]; revision: string }>('plan_follow', {
        after: String(state.after),
        wait: state.revision === undefined ? '0' : '15000',
        ...(state.revision !== undefined ? { revision: state.revision } : {}),
      })
      if (state.revision !== undefined && revision !== state.revision) await load()
      state.revision = revision
      for (const c of commands) {
        apply(c)
        state.after = c.id
        await report(c)
      }
    } catch (err) {
      if ((err as { code?: string }).code === 'realtime_unavailable') {
        // editing still works; only the agent's steering and live changes need the plan's realtime
        state.live = false
        return say(`${(err as Error).message}. Edits still save; reopen the plan to see others' changes.`)
      }
      say(`Lost the live feed: ${(err as Error).message}; retrying.`)
      await new Promise((r) => setTimeout(r, 3000))
    }
  }
}

async function start(projectId: unknown, nodeId: unknown) {
  if (state.started || typeof projectId !== 'string' || !projectId) return
  state.started = true
  state.projectId = projectId
  state.rootId = typeof nodeId === 'string' ? nodeId : ''
  $('#title').textContent = `Plan · ${projectId}`
  try {
    await load()
    select(state.selected ?? visible()[0]?.node.id ?? null, false)
  } catch (err) {
    say(`Could not read the plan: ${(err as Error).message}`)
  }
  void follow()
}

function hostContext(ctx: McpUiHostContext | undefined) {
  if (!ctx) return
  if (ctx.theme) applyDocumentTheme(ctx.theme)
  if (ctx.styles?.variables) applyHostStyleVariables(ctx.styles.variables)
  if (ctx.styles?.css?.fonts) applyHostFonts(ctx.styles.css.fonts)
  if (ctx.displayMode) document.body.dataset.display = ctx.displayMode
  const full = $('#full')
  full.hidden = !ctx.availableDisplayModes?.includes('fullscreen')
  full.textContent = ctx.displayMode === 'fullscreen' ? 'Back inline' : 'Full screen'
}

app.ontoolinput = (p) => void start(p.arguments?.projectId, p.arguments?.nodeId)
app.ontoolresult = (r) => {
  const s = r.structuredContent as { projectId?: unknown; nodeId?: unknown } | undefined
  void start(s?.projectId, s?.nodeId)
}
app.onhostcontextchanged = (ctx) => hostContext({ ...app.getHostContext(), ...ctx })
app.onteardown = async () => ({})

$('#tree').addEventListener('keydown', onKey)
document.addEventListener('keydown', (e) => {
  if ((e.ctrlKey || e.metaKey) && e.key === 'z' && !(e.target instanceof HTMLInputElement)) {
    e.preventDefault()
    void undoLast()
  }
})
$('#ask').addEventListener('click', () => {
  const n = state.selected ? state.nodes.get(state.selected) : undefined
  if (!n) return
  // hand the job to the agent: a message in the conversation, as the person would type it
  void app
    .sendMessage({
      role: 'user',
      content: [{ type: 'text', text: `Please work on ${n.type} ${n.id} “${n.data.label}” (project ${state.projectId}).` }],
    })
    .then(() => say('Sent to the agent.'))
    .catch((err: Error) => say(`The host did not take the message: ${err.message}`))
})
$('#full').addEventListener('click', () => {
  const mode = app.getHostContext()?.displayMode === 'fullscreen' ? 'inline' : 'fullscreen'
  void app.requestDisplayMode({ mode }).then((r) => hostContext({ ...app.getHostContext(), displayMode: r.mode }))
})

/**
 * Opened on its own (a saved file, a browser tab, a frame whose parent is no MCP Apps host) no
 * host answers `ui/initialize`: say what this page is and how to open it, instead of an empty
 * shell and a "Method not found" of the page answering itself.
 */
function noHost(why: string) {
  document.body.dataset.host = 'none'
  $('#title').textContent = 'Arbor plan view'
  for (const b of ['#ask', '#full']) ($(b) as HTMLButtonElement).hidden = true
  $('#tree').removeAttribute('role') // a note now, not a tree
  $('#tree').replaceChildren(
    Object.assign(document.createElement('div'), {
      className: 'no-host',
      role: 'note',
      innerHTML:
        '<p><strong>This is Arbor’s plan view, an MCP App.</strong> It shows a project’s plan inside an MCP Apps host ' +
        '(a chat client that shows MCP Apps) and reads the plan through that host, so on its own it has nothing to show.</p>' +
        '<p>To open it: connect the host to Arbor’s MCP server and ask for the plan; the <code>open_plan</code> tool opens this view in the conversation. ' +
        'To see and edit the plan in a browser, open the Arbor app at <code>/app</code> on your Arbor server.</p>',
    }),
  )
  document.querySelector('.keys')?.setAttribute('hidden', '')
  say(why)
}

if (window.parent === window) noHost('No MCP Apps host: this page was opened on its own.')
else {
  // a frame whose parent never answers: after a while, say so (a real host answers at once)
  const silent = setTimeout(() => noHost('No MCP Apps host answered.'), 8000)
  try {
    await app.connect()
    clearTimeout(silent)
    hostContext(app.getHostContext())
  } catch (err) {
    clearTimeout(silent)
    noHost(`No MCP Apps host answered (${(err as Error).message}).`)
  }
}
