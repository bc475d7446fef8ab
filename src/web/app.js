// The live canvas (/app?projectId=…): the project's tree and matrix, kept live from the events
// feed, driven by view commands (POST /view-command → GET /view/commands here) and reporting
// what it shows (POST /view/report), so GET /view-state reads back what the person sees.
// The API key comes from #key=… (then removed from the address bar) or from localStorage, and
// only ever travels in the Authorization header. Every value is rendered as text, never as HTML.

const API = '/api/v1'
const KEY_STORE = 'arbor.apiKey'
const params = new URLSearchParams(location.search)
const projectId = params.get('projectId') ?? ''

const fromHash = new URLSearchParams(location.hash.slice(1)).get('key')
if (fromHash) {
  localStorage.setItem(KEY_STORE, fromHash)
  history.replaceState(null, '', location.pathname + location.search)
}
let apiKey = localStorage.getItem(KEY_STORE) ?? ''

const view = {
  mode: 'tree',
  expanded: new Set(),
  selected: null,
  focused: [],
  iteration: null,
  applied: 0,
}
let nodes = new Map()
let iterations = []
let eventCursor = null

// --- helpers --------------------------------------------------------------------------------

const $ = (sel) => document.querySelector(sel)
function el(tag, attrs = {}, ...kids) {
  const node = document.createElement(tag)
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue
    if (k === 'class') node.className = v
    else if (k === 'text') node.textContent = v
    else if (k.startsWith('on')) node.addEventListener(k.slice(2), v)
    else node.setAttribute(k, v === true ? '' : v)
  }
  for (const kid of kids.flat()) if (kid !== null && kid !== undefined) node.append(kid)
  return node
}

class Unauthorized extends Error {}

async function api(method, path, body) {
  const res = await fetch(API + path, {
    method,
    headers: { authorization: `Bearer ${apiKey}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  })
  if (res.status === 401) throw new Unauthorized()
  const json = await res.json()
  if (!res.ok) throw new Error(json.message ?? json.error ?? `HTTP ${res.status}`)
  return json
}

const TYPE_NAMES = { goal: 'Goal', need: 'Need', approach: 'Bet', job: 'Job', task: 'Task' }
const CHILD_TYPE = { goal: 'need', need: 'approach', approach: 'job' }

function childrenOf(id) {
  const out = []
  for (const n of nodes.values()) if (n.parentId === id) out.push(n)
  return out
}
function ancestorsOf(id) {
  const out = []
  for (let n = nodes.get(id); n?.parentId; n = nodes.get(n.parentId)) out.push(n.parentId)
  return out
}
function goalOf(id) {
  const chain = [id, ...ancestorsOf(id)]
  return chain.find((x) => nodes.get(x)?.type === 'goal') ?? null
}
function chips(n) {
  const d = n.data
  const out = []
  if (n.type === 'goal' && d.goalStatus) out.push(d.goalStatus)
  if (n.type === 'approach') for (const k of ['approachStatus', 'size', 'kano']) if (d[k]) out.push(d[k])
  if (n.type === 'job' || n.type === 'task') {
    out.push(d.status === 'done' ? 'done' : 'open')
    if (d.maturity) out.push(d.maturity)
  }
  if (n.type === 'task' && d.kind) out.push(d.urgent ? `${d.kind} · urgent` : d.kind)
  return out.map((c) => el('span', { class: c === 'done' ? 'chip done' : 'chip', text: c }))
}

// --- rendering ------------------------------------------------------------------------------

function renderTreeNode(n) {
  const kids = childrenOf(n.id)
  const open = view.expanded.has(n.id)
  const li = el(
    'li',
    { class: `node${view.selected === n.id ? ' selected' : ''}`, 'data-id': n.id, 'aria-expanded': kids.length ? String(open) : null },
    el(
      'div',
      { class: 'row', onclick: () => act({ type: 'selectNode', nodeId: n.id }) },
      el('button', {
        class: 'toggle',
        text: kids.length ? (open ? '▾' : '▸') : '·',
        'aria-label': open ? 'collapse' : 'expand',
        onclick: (e) => {
          e.stopPropagation()
          if (kids.length) act({ type: open ? 'collapseNode' : 'expandNode', nodeId: n.id })
        },
      }),
      el('span', { class: `type ${n.type}`, text: TYPE_NAMES[n.type] ?? n.type }),
      el('span', { class: 'label', text: n.data.label ?? '' }),
      ...chips(n),
      kids.length && !open
        ? el('span', { class: 'count', text: `${kids.length} ${CHILD_TYPE[n.type] ?? 'item'}${kids.length > 1 ? 's' : ''}` })
        : null,
    ),
  )
  if (open && kids.length) li.append(el('ul', {}, kids.map(renderTreeNode)))
  return li
}

function visibleGoals() {
  const goals = [...nodes.values()].filter((n) => n.type === 'goal')
  return view.focused.length ? goals.filter((g) => view.focused.includes(g.id)) : goals
}

function focusNote() {
  if (!view.focused.length) return null
  return el(
    'p',
    { class: 'focus-note' },
    `Showing ${view.focused.length} focused goal${view.focused.length > 1 ? 's' : ''}.`,
    el('button', { text: 'Show all', onclick: () => act({ type: 'focusGoals', goalIds: [] }, true) }),
  )
}

function renderTree() {
  const tasks = [...nodes.values()].filter((n) => n.type === 'task')
  const goals = visibleGoals()
  return el(
    'div',
    { id: 'tree-view' },
    focusNote(),
    goals.length ? el('ul', { class: 'tree' }, goals.map(renderTreeNode)) : el('p', { class: 'empty', text: 'No goals yet.' }),
    tasks.length ? [el('h3', { text: 'Tasks' }), el('ul', { class: 'tree' }, tasks.map(renderTreeNode))] : null,
  )
}

function card(n) {
  return el(
    'div',
    {
      class: `card${view.selected === n.id ? ' selected' : ''}`,
      'data-id': n.id,
      onclick: () => act({ type: 'selectNode', nodeId: n.id, autoSwitch: false }),
    },
    el('div', { class: 'label', text: n.data.label ?? '' }),
    el('div', { class: 'meta' }, el('span', { class: `type ${n.type}`, text: TYPE_NAMES[n.type] }), ...chips(n)),
  )
}

function renderMatrix() {
  const cols = iterations.filter((it) => it.status === 'active')
  const items = [...nodes.values()].filter((n) => n.type === 'job' || n.type === 'task')
  const rows = [...visibleGoals().map((g) => ({ id: g.id, label: g.data.label, type: 'goal' })), { id: null, label: 'Tasks', type: 'task' }]
  const head = el(
    'tr',
    {},
    el('th', { class: 'row-head', text: 'Goal' }),
    cols.map((c) =>
      el(
        'th',
        {
          class: view.iteration === c.name ? 'picked' : null,
          'data-iteration': c.name,
          onclick: () => act({ type: 'selectIteration', iterationName: c.name }),
        },
        c.name,
      ),
    ),
  )
  const body = rows.map((r) =>
    el(
      'tr',
      {},
      el('th', { class: 'row-head' }, r.type === 'goal' ? [el('span', { class: 'type goal', text: 'Goal' }), ' ', r.label] : r.label),
      cols.map((c) =>
        el(
          'td',
          { class: view.iteration === c.name ? 'picked' : null },
          items
            .filter(
              (n) =>
                (n.data.iteration ?? 'Later') === c.name && (r.id === null ? n.type === 'task' : n.type === 'job' && goalOf(n.id) === r.id),
            )
            .map(card),
        ),
      ),
    ),
  )
  return el('div', { id: 'matrix-view' }, focusNote(), el('table', { class: 'matrix' }, el('thead', {}, head), el('tbody', {}, body)))
}

function renderPanel() {
  const panel = $('#panel')
  panel.replaceChildren()
  const n = view.selected ? nodes.get(view.selected) : null
  if (!n) {
    panel.append(el('p', { class: 'empty', text: 'Select a node to see its details.' }))
    return
  }
  const d = n.data
  const facts = [
    ['id', n.id],
    ['parent', n.parentId],
    ['iteration', d.iteration],
    ['status', n.type === 'job' || n.type === 'task' ? (d.status === 'done' ? 'done' : 'open') : null],
    ['completed', d.completedAt],
    ['maturity', d.maturity],
    ['measure', d.measure],
    ['kano', d.kano],
    ['size', d.size],
    ['approach status', d.approachStatus],
    ['goal status', d.goalStatus],
    ['kind', d.kind],
    ['created', n.createdAt],
  ].filter(([, v]) => v !== undefined && v !== null && v !== '')
  const parts = [
    el('span', { class: `type ${n.type}`, text: TYPE_NAMES[n.type] }),
    el('h2', { id: 'panel-label', text: d.label ?? '' }),
    d.description ? el('p', { class: 'desc', text: d.description }) : null,
    d.notes ? el('p', { class: 'measure', text: d.notes }) : null,
    el(
      'dl',
      {},
      facts.flatMap(([k, v]) => [el('dt', { text: k }), el('dd', { text: String(v) })]),
    ),
  ]
  panel.append(...parts.filter((x) => x !== null))
}

function render() {
  document.body.dataset.mode = view.mode
  $('#mode-tree').classList.toggle('on', view.mode === 'tree')
  $('#mode-matrix').classList.toggle('on', view.mode === 'matrix')
  $('#canvas').replaceChildren(view.mode === 'tree' ? renderTree() : renderMatrix())
  renderPanel()
}

// --- commands -------------------------------------------------------------------------------

function expandPathTo(id) {
  for (const a of ancestorsOf(id)) view.expanded.add(a)
}

function apply(c) {
  switch (c.type) {
    case 'setViewMode':
      view.mode = c.mode
      break
    case 'selectIteration':
      view.iteration = c.iterationName
      break
    case 'selectNode':
    case 'zoomToNode':
      if (c.switchTo) view.mode = c.switchTo
      if (c.type === 'selectNode') view.selected = c.nodeId ?? null
      if (c.nodeId) expandPathTo(c.nodeId)
      break
    case 'expandNode':
      view.expanded.add(c.nodeId)
      break
    case 'collapseNode':
      view.expanded.delete(c.nodeId)
      break
    case 'expandAll': {
      const stack = [c.nodeId]
      while (stack.length) {
        const id = stack.pop()
        if (childrenOf(id).length) view.expanded.add(id)
        stack.push(...childrenOf(id).map((k) => k.id))
      }
      break
    }
    case 'focusGoals':
      view.focused = c.goalIds ?? []
      break
  }
  render()
  if ((c.type === 'zoomToNode' || c.type === 'selectNode') && c.nodeId) {
    const target = document.querySelector(`[data-id="${CSS.escape(c.nodeId)}"]`)
    if (target) {
      target.scrollIntoView({ block: 'center', behavior: 'smooth' })
      target.classList.add('flash')
      setTimeout(() => target.classList.remove('flash'), 1200)
    }
  }
}

/** A click in the page: applied at once, then reported (the person's own view changes too). */
function act(c, clearFocus = false) {
  if (clearFocus) c.goalIds = []
  apply(c)
  report(null).catch(() => {})
}

function stateNow() {
  return {
    view_mode: view.mode,
    selected_iteration: view.iteration,
    expanded_nodes: [...view.expanded],
    focused_goals: view.focused,
    selected_node: view.selected,
  }
}

async function report(applied) {
  await api('POST', '/view/report', { projectId, applied, state: stateNow() })
}

function setLive(ok, text) {
  $('#live-dot').classList.toggle('ok', ok)
  $('#live-text').textContent = text
}

async function commandLoop() {
  for (;;) {
    try {
      const { commands } = await api('GET', `/view/commands?projectId=${encodeURIComponent(projectId)}&after=${view.applied}&wait=8000`)
      setLive(true, 'live')
      for (const c of commands) {
        apply(c)
        view.applied = c.id
        await report({ id: c.id, type: c.type })
      }
    } catch (err) {
      if (err instanceof Unauthorized) return signIn('This API key is no longer valid. Paste a current one.')
      setLive(false, 'reconnecting…')
      await new Promise((r) => setTimeout(r, 2000))
    }
  }
}

// --- data -----------------------------------------------------------------------------------

async function load() {
  const [n, it] = await Promise.all([
    api('GET', `/nodes?projectId=${encodeURIComponent(projectId)}`),
    api('GET', `/iterations?projectId=${encodeURIComponent(projectId)}`),
  ])
  nodes = new Map(n.nodes.map((x) => [x.id, x]))
  iterations = it.iterations
}

/** Follow the events feed; any change reloads the project (small, and always consistent). */
async function eventLoop() {
  for (;;) {
    try {
      const q = `/events?projectId=${encodeURIComponent(projectId)}&limit=500${eventCursor ? `&after=${encodeURIComponent(eventCursor)}` : ''}`
      const page = await api('GET', q)
      const first = eventCursor === null
      eventCursor = page.nextCursor ?? eventCursor
      if (page.events.length && !first) {
        await load()
        render()
      }
      if (page.events.length >= 500) continue
    } catch (err) {
      if (err instanceof Unauthorized) return
    }
    await new Promise((r) => setTimeout(r, 1000))
  }
}

async function heartbeatLoop() {
  for (;;) {
    await new Promise((r) => setTimeout(r, 10_000))
    await report(null).catch(() => {})
  }
}

// --- start ----------------------------------------------------------------------------------

function signIn(message) {
  $('#app').hidden = true
  const box = $('#signin')
  box.hidden = false
  $('#signin-message').textContent = message
  $('#signin-form').onsubmit = (e) => {
    e.preventDefault()
    apiKey = $('#signin-key').value.trim()
    localStorage.setItem(KEY_STORE, apiKey)
    box.hidden = true
    start()
  }
}

async function start() {
  if (!projectId) {
    $('#app').hidden = true
    $('#signin').hidden = false
    $('#signin-message').textContent = 'Open this page as /app?projectId=<your project id>.'
    $('#signin-form').hidden = true
    return
  }
  if (!apiKey) return signIn('Paste an Arbor API key (arb_…) to open this project. It stays in this browser.')
  try {
    const [{ projects }] = await Promise.all([api('GET', '/projects?includeArchived=true'), load()])
    $('#project-name').textContent = projects.find((p) => p.id === projectId)?.name ?? projectId
    document.title = `${$('#project-name').textContent} · Arbor`
  } catch (err) {
    if (err instanceof Unauthorized) return signIn('This API key is not valid. Paste a current one.')
    $('#project-name').textContent = `Cannot open ${projectId}: ${err.message}`
    return
  }
  $('#app').hidden = false
  $('#mode-tree').onclick = () => act({ type: 'setViewMode', mode: 'tree' })
  $('#mode-matrix').onclick = () => act({ type: 'setViewMode', mode: 'matrix' })
  render()
  await report(null).catch(() => {})
  void eventLoop()
  void heartbeatLoop()
  void commandLoop()
}

void start()
