/**
 * The planning app (/app?projectId=…): the project's tree and matrix to read and edit, kept live
 * by one long poll (GET /view/commands: the queued view commands, or a change of the tree, and
 * the page's heartbeat). After every change of the view it reports what it shows (POST
 * /view/report), so GET /view-state reads back what the person sees.
 */
import { startAddOf } from './actions.ts'
import { Activity } from './activity.ts'
import { api, loadKey, Offline, q, Refused, Unauthorized } from './api.ts'
import type { Ui } from './ctx.ts'
import { openHelp, openIterations, openKeys } from './dialogs.ts'
import { $, el, focusKey, statusLine } from './dom.ts'
import { onCanvasKey, onDocumentKey } from './keyboard.ts'
import { startLive, startStream } from './live.ts'
import { renderMatrix } from './matrix.ts'
import { type Command, type Iteration, Plan, type PlanNode, type Shown, View } from './model.ts'
import { renderPanel } from './panel.ts'
import { Presence } from './presence.ts'
import { openNewProject, openProjects } from './projects.ts'
import { Proposals } from './proposals.ts'
import { Review } from './review.ts'
import { setupSearch } from './search.ts'
import { askForKey, BAD_KEY, chooseProject } from './signin.ts'
import { patchRows, renderTree, type TreeHooks } from './tree.ts'

const projectId = new URLSearchParams(location.search).get('projectId') ?? ''
const plan = new Plan()
const view = new View(plan)
const phone = () => matchMedia('(max-width: 760px)').matches

const say = statusLine(() => $('#status'))
const ui: Ui = {
  projectId,
  plan,
  view,
  act,
  render,
  select,
  edit: null,
  errors: new Map(),
  marks: new Map(),
  mine: new Map(),
  drafts: new Map(),
  saving: new Set(),
  stale: new Map(),
  panelOpen: !phone(),
  undo: [],
  undone: [],
  reload: () => loadPlan(),
  unfolded: new Set(),
  say,
  presence: { on: () => [], editing: () => undefined },
  forced: new Set(),
}
// who is where (live.md, 3): kept from the stream; this page's own presence posted while visible
const presence = new Presence(ui, (ids) => patch(ids))
ui.presence = presence
const live = { revision: undefined as string | undefined, applied: 0, session: 0 }
const activity = new Activity(ui, $('#activity'), () => toggleActivity())
const hooks: TreeHooks = {
  add: (type, parentId) => startAddOf(ui, type, parentId),
  toggle: (id) => act({ type: view.expanded.has(id) ? 'collapseNode' : 'expandNode', nodeId: id }),
  open: (id) => {
    select(id)
    openDetails(false)
  },
}

// --- rendering ------------------------------------------------------------------------------

function render() {
  const active = document.activeElement as HTMLElement | null
  // a focused element removed by the redraw leaves the focus on <body>: where it was decides
  const inCanvas = !!active?.closest('#canvas') || ((!active || active === document.body) && lastFocus === 'canvas')
  const caret = active instanceof HTMLInputElement && active.id === 'edit-label' ? [active.selectionStart, active.selectionEnd] : null
  // found again by its id, or by its classes within its list entry (a History change's buttons have no id)
  const inPanel = active?.closest('#panel')
    ? { key: focusKey(active), start: (active as HTMLInputElement).selectionStart, end: (active as HTMLInputElement).selectionEnd }
    : null
  document.body.dataset.mode = view.mode
  document.body.classList.toggle('panel-open', ui.panelOpen)
  document.body.classList.toggle('empty-plan', plan.nodes.size === 0) // one "Add a goal": the empty state's
  for (const m of ['tree', 'matrix'] as const) {
    $(`#mode-${m}`).classList.toggle('on', view.mode === m)
    $(`#mode-${m}`).setAttribute('aria-pressed', String(view.mode === m))
  }
  renderIterationPicker()
  const canvas = $('#canvas')
  const scroll = canvas.scrollTop
  canvas.replaceChildren(view.mode === 'tree' ? renderTree(ui, hooks) : renderMatrix(ui))
  canvas.scrollTop = scroll
  renderPanel(ui, $('#panel'), closeDetails)
  const edit = document.querySelector<HTMLInputElement>('#edit-label')
  if (edit) {
    if (document.activeElement !== edit) edit.focus()
    // a redraw while typing keeps the caret where it was (a new node's label: at the end)
    const at = caret ?? [edit.value.length, edit.value.length]
    edit.setSelectionRange(at[0] ?? edit.value.length, at[1] ?? edit.value.length)
  } else if (inPanel?.key && document.querySelector(`#panel ${inPanel.key}`)) {
    const again = document.querySelector(`#panel ${inPanel.key}`) as HTMLInputElement
    again.focus()
    if (inPanel.start !== null && 'setSelectionRange' in again) again.setSelectionRange?.(inPanel.start, inPanel.end)
  } else if (inCanvas) focusSelected() // a load never gets here (lastFocus starts as 'other'): the page does not take the focus
  if (view.zoomTo) {
    const id = view.zoomTo
    view.zoomTo = null
    const target = canvas.querySelector<HTMLElement>(`[data-id="${CSS.escape(id)}"]`) ?? goalRowOf(id)
    if (target) {
      target.scrollIntoView({ block: 'center', inline: 'nearest' })
      target.classList.add('flash')
      setTimeout(() => target.classList.remove('flash'), 1400)
    }
  }
  if (activity.open) activity.draw()
  void presence.sync()
  keepTree()
}

/**
 * This browser's open branches and selection of this project, kept across reloads (per project
 * and per key, so two people sharing a browser each get their own); ids gone since are dropped.
 */
const treeKey = () => `arbor.tree.${projectId}.${loadKey().slice(-8)}`
function keepTree() {
  try {
    localStorage.setItem(treeKey(), JSON.stringify({ expanded: [...view.expanded], selected: view.selected }))
  } catch {} // storage full or refused: the tree still works, it is only not kept
}
function restoreTree() {
  try {
    const kept = JSON.parse(localStorage.getItem(treeKey()) ?? 'null') as { expanded?: unknown; selected?: unknown } | null
    if (!kept) return
    if (Array.isArray(kept.expanded))
      for (const id of kept.expanded) if (typeof id === 'string' && plan.nodes.has(id)) view.expanded.add(id)
    if (typeof kept.selected === 'string' && plan.nodes.has(kept.selected)) view.selected = kept.selected
  } catch {} // unreadable: start as a fresh page does
}

// 'other' until the person moves the focus: a page that loads leaves it at the start, so one Tab reaches the tree
let lastFocus: 'canvas' | 'other' = 'other'
document.addEventListener('focusin', (e) => {
  lastFocus = (e.target as HTMLElement).closest('#canvas') ? 'canvas' : 'other'
  if (started) void presence.sync() // a field's editor opened: its edit intent
})
// a field's editor left: the intent ends (the focus may move on to another field at once)
document.addEventListener('focusout', () => started && setTimeout(() => void presence.sync(), 0))
let started = false

/** A live change of some nodes' data: their rows (and their parents' counts) redrawn in place, or everything. */
function patch(ids: Set<string>) {
  const all = new Set(ids)
  for (const id of ids) for (const a of plan.ancestors(id)) all.add(a)
  if (view.mode !== 'tree' || ui.edit || !patchRows(ui, hooks, all)) return render()
  if (view.selected && all.has(view.selected)) {
    if (document.activeElement?.closest('#panel'))
      render() // keeps what is typed there, and its focus
    else renderPanel(ui, $('#panel'), closeDetails)
  }
  if (activity.open) activity.draw()
}

/** Give the keyboard focus to the canvas's tab stop (the selected item when it is shown; with no item, its first control). */
function focusSelected() {
  const stop = $('#canvas').querySelector<HTMLElement>('[tabindex="0"], #empty-add-goal')
  if (stop && document.activeElement !== stop) stop.focus({ preventScroll: false })
}

/** In the matrix a need or bet has no cell of its own: its goal's row stands in for it. */
function goalRowOf(id: string): HTMLElement | null {
  const goal = plan.goalOf(id)
  return goal ? document.querySelector<HTMLElement>(`[data-row="${CSS.escape(goal)}"]`) : null
}

function renderIterationPicker() {
  const select = $<HTMLSelectElement>('#iteration')
  select.replaceChildren(
    el('option', { value: '', text: 'All iterations' }),
    ...plan
      .columns(view.iteration)
      .map((it: Iteration) => el('option', { value: it.name, text: it.status === 'done' ? `${it.name} (done)` : it.name })),
  )
  select.value = view.iteration ?? ''
}

// --- acting and reporting ---------------------------------------------------------------------

let reportTimer: ReturnType<typeof setTimeout> | undefined

/** A click or a key that changes the view: the same command an agent could send, applied at once, then reported. */
function act(c: Command) {
  view.apply(c)
  changed()
}

/**
 * Focus and selection move together (a single-select tree); the panel follows. The canvas is
 * patched, not redrawn, so a click that began on a row still lands on it.
 */
function select(id: string | null) {
  const canvas = $('#canvas')
  const find = (x: string | null) =>
    x ? canvas.querySelector<HTMLElement>(`[role=treeitem][data-id="${CSS.escape(x)}"],[data-card][data-id="${CSS.escape(x)}"]`) : null
  if (id === view.selected && find(id)) return focusSelected()
  const before = find(view.selected)
  view.selected = id
  const after = find(id)
  if (id && !after) {
    view.reveal(id)
    changed()
    return focusSelected()
  }
  for (const x of canvas.querySelectorAll<HTMLElement>('[data-id][tabindex="0"]')) x.tabIndex = -1 // one tab stop
  for (const [x, on] of [
    [before, false],
    [after, true],
  ] as const) {
    if (!x) continue
    x.classList.toggle('selected', on)
    x.setAttribute(x.getAttribute('role') === 'treeitem' ? 'aria-selected' : 'aria-pressed', String(on))
    x.tabIndex = on ? 0 : -1
  }
  renderPanel(ui, $('#panel'), closeDetails)
  after?.focus()
  after?.scrollIntoView({ block: 'nearest' })
  keepTree()
  scheduleReport()
}

function openDetails(focus = true) {
  ui.panelOpen = true
  render()
  if (focus) (document.querySelector<HTMLElement>('#f-label') ?? $('#panel-close')).focus()
}

function closeDetails() {
  ui.panelOpen = false
  render()
  focusSelected()
}

/** The person changed the view: show it, then report it (once for a burst of changes). */
function changed() {
  render()
  scheduleReport()
}

function scheduleReport() {
  if (live.revision === undefined) return // no live canvas on this plan: nothing to report to
  clearTimeout(reportTimer)
  reportTimer = setTimeout(() => void report().catch(() => {}), 150)
}

const report = (last: { id: number; type: string } | null = null) =>
  api('POST', '/view/report', { projectId, applied: last, state: view.shown() })

async function loadPlan() {
  const [n, it] = await Promise.all([
    api<{ nodes: PlanNode[] }>('GET', `/nodes?projectId=${q(projectId)}`),
    api<{ iterations: Iteration[] }>('GET', `/iterations?projectId=${q(projectId)}`),
  ])
  plan.set(n.nodes, it.iterations)
  onPlanLoaded()
}

/** What follows every load of the plan (the proposals' open count, once wired). */
let onPlanLoaded = () => {}

function setLive(state: 'live' | 'off' | 'retry', text: string) {
  $('#live').dataset.state = state
  $('#live-text').textContent = text
}

// --- start ----------------------------------------------------------------------------------

/** The key failed, or there is none: the long poll of the old key stops, and the person is asked for one. */
function signIn(message: string, error = false) {
  live.session++
  askForKey(message, () => void start(), error)
}

const pickProject = () => chooseProject(signIn, () => void openNewProject())

async function start() {
  const session = ++live.session
  if (!loadKey())
    return signIn('Paste an Arbor API key (arb_…) to open the app. It stays in this browser and is sent only in the Authorization header.')
  if (!projectId) return pickProject()
  $('#signin').hidden = true
  $('#app').hidden = false
  $('#project-name').textContent = projectId
  try {
    const { projects } = await api<{ projects: { id: string; name: string }[] }>('GET', '/projects?includeArchived=true')
    const project = projects.find((p) => p.id === projectId)
    if (!project) return noSuchProject()
    const name = project.name
    $('#project-name').textContent = name
    $('#project-name').title = name // cut with "…" in a narrow header: whole on hover
    document.title = `${name} · Arbor`
    // the revision is read before the plan, so a change in between is not missed
    live.revision = await api<{ revision: string }>('GET', `/view/commands?projectId=${q(projectId)}&wait=0`).then(
      (r) => r.revision,
      (err) => {
        if (err instanceof Refused && err.status === 403) return undefined // no live canvas on this plan: the plan alone
        throw err
      },
    )
    await loadPlan()
    // a reload shows what this project's canvas showed before, then the commands queued since
    if (live.revision !== undefined) view.adopt(await api<Shown>('GET', `/view-state?projectId=${q(projectId)}`))
    restoreTree()
    view.prune()
  } catch (err) {
    if (err instanceof Unauthorized) return signIn(BAD_KEY, true)
    $('#canvas').replaceChildren(el('p', { class: 'empty error', text: `Cannot open ${projectId}: ${(err as Error).message}` }))
    // rate-limited or offline: say so, and try again by itself
    const wait = err instanceof Refused && err.status === 429 ? Math.max(2, err.retryAfter) : err instanceof Offline ? 5 : 0
    if (!wait) return setLive('off', 'Not connected')
    setLive('retry', err instanceof Offline ? 'Offline: trying again in 5 s' : `Rate limited by the server: trying again in ${wait} s`)
    setTimeout(() => session === live.session && void start(), wait * 1000)
    return
  }
  performance.mark('arbor:loaded')
  wire()
  render()
  performance.mark('arbor:interactive')
  if (live.revision === undefined) return setLive('off', 'View commands need the Builder or Team plan')
  setLive('live', 'Live') // the first long poll may wait its whole time before it answers
  void startLive({ ui, live, session, loadPlan, setLive, report, activity, signIn, patch })
  // the stream keeps the page current at once (the long poll stays for view commands, and for
  // when the stream cannot be had); presence shows who else is here
  started = true
  void presence.start().catch(() => {})
  void startStream({ ui, live, session, loadPlan, setLive, report, activity, signIn, patch, presence })
}

/**
 * The address names no project this key can open: say so, with the ways on (another project, a
 * new one) and no add buttons that could only fail.
 */
function noSuchProject() {
  wire()
  document.body.classList.add('no-project')
  for (const b of ['#add-goal', '#add-task']) $<HTMLButtonElement>(b).hidden = true
  $('#canvas').replaceChildren(
    el(
      'div',
      { class: 'empty-state', id: 'no-project' },
      el('h2', { text: `No project “${projectId}” here` }),
      el('p', { text: 'This API key cannot open a project with that id: it does not exist, or it is not one of yours.' }),
      el(
        'div',
        { class: 'empty-actions' },
        el('button', {
          type: 'button',
          class: 'primary',
          id: 'empty-projects',
          text: 'Choose a project',
          onclick: () => void openProjects(projectId),
        }),
        el('button', { type: 'button', id: 'empty-new-project', text: 'New project', onclick: () => void openNewProject() }),
      ),
    ),
  )
  setLive('off', 'No project')
  $('#empty-projects').focus()
}

function toggleActivity() {
  activity.open = !activity.open
  showColumn($('#open-activity'), $('#activity'), activity.open)
  if (activity.open) void activity.refresh().then(() => activity.open && $('#activity-close').focus())
}

/**
 * A column beside the tree (Activity, Review, Proposals) shown or hidden by its menu button. It
 * comes before the header in the page's order, so its opener moves the focus into it once drawn;
 * closed, the focus goes back to its button, or to ☰ when the menu is folded (the button hidden).
 */
function showColumn(button: HTMLElement, box: HTMLElement, open: boolean) {
  box.hidden = !open
  button.setAttribute('aria-expanded', String(open))
  syncCovered()
  if (open) return
  if (box.contains(document.activeElement) || document.activeElement === document.body || document.activeElement === button)
    (button.checkVisibility() ? button : $('#open-menu')).focus()
}

/**
 * On a phone a column covers the whole page (5-phone.css): what lies under it is inert while it is
 * open, so Tab stays within what can be seen and a screen reader does not read what is covered.
 */
function syncCovered() {
  const covered = phone() && [...document.querySelectorAll<HTMLElement>('.body > .activity')].some((c) => !c.hidden)
  for (const e of document.querySelectorAll<HTMLElement>('.app > .bar, #canvas, #panel, .toolbar > button')) e.inert = covered
}

let wired = false
/** Handlers of the page's fixed parts, once. */
function wire() {
  if (wired) return
  wired = true
  $('#mode-tree').onclick = () => act({ type: 'setViewMode', mode: 'tree' })
  $('#mode-matrix').onclick = () => act({ type: 'setViewMode', mode: 'matrix' })
  $<HTMLSelectElement>('#iteration').onchange = (e) => {
    const name = (e.target as HTMLSelectElement).value
    if (name) act({ type: 'selectIteration', iterationName: name })
    else {
      view.iteration = null
      changed()
    }
  }
  $('#sign-out').onclick = () => signIn('Signed out. Paste an API key to open Arbor again.')
  $('#add-goal').onclick = () => startAddOf(ui, 'goal', null)
  $('#add-task').onclick = () => startAddOf(ui, 'task', null)
  $('#open-help').onclick = openHelp
  // on a phone the menu folds behind one button (6-density.css); a choice in it closes it
  const menu = (open: boolean) => {
    document.body.classList.toggle('menu-open', open)
    $('#open-menu').setAttribute('aria-expanded', String(open))
  }
  $('#open-menu').onclick = () => menu(!document.body.classList.contains('menu-open'))
  $('#menu').addEventListener('click', (e) => {
    if ((e.target as HTMLElement).closest('button')) menu(false)
  })
  document.addEventListener('click', (e) => {
    if (document.body.classList.contains('menu-open') && !(e.target as HTMLElement).closest('#menu, #open-menu')) menu(false)
  })
  $('#menu').addEventListener('keydown', (e) => {
    if (e.key === 'Escape' && document.body.classList.contains('menu-open')) {
      menu(false)
      $('#open-menu').focus()
    }
  })
  $('#open-projects').onclick = () => void openProjects(projectId)
  $('#open-settings').onclick = openKeys
  $('#open-iterations').onclick = () => openIterations(ui, loadPlan)
  const toggleReview = () => {
    review.open = !review.open
    showColumn($('#open-review'), $('#review'), review.open)
    if (review.open) void review.refresh().then(() => review.open && review.focusStart())
  }
  const review = new Review(ui, $('#review'), loadPlan, toggleReview)
  $('#open-review').onclick = toggleReview
  // live.md §5: the proposals waiting for a decision, their count always on the menu
  const toggleProposals = () => {
    proposals.open = !proposals.open
    showColumn($('#open-proposals'), $('#proposals'), proposals.open)
    if (proposals.open) void proposals.refresh().then(() => proposals.open && proposals.focusStart())
  }
  const proposals = new Proposals(ui, $('#proposals'), $('#open-proposals'), loadPlan, toggleProposals)
  onPlanLoaded = () => void proposals.refreshCount()
  onPlanLoaded()
  $('#open-proposals').onclick = toggleProposals
  $('#open-activity').onclick = toggleActivity
  // a phone turned, a window resized: what a column covers is inert on a phone only
  matchMedia('(max-width: 760px)').addEventListener('change', syncCovered)
  $('#canvas').addEventListener('keydown', (e) => onCanvasKey(ui, e, { openDetails }))
  // the selection follows the focus, however it got there (Tab, a click, a screen reader)
  $('#canvas').addEventListener('focusin', (e) => {
    const id = (e.target as HTMLElement).closest<HTMLElement>('[role=treeitem][data-id],[data-card]')?.dataset.id
    if (id && id !== view.selected && e.target === (e.target as HTMLElement).closest('[data-id]')) select(id)
  })
  $('#canvas').addEventListener('click', (e) => {
    const b = (e.target as HTMLElement).closest<HTMLElement>('[data-conflict]')
    if (!b || !ui.edit?.id) return
    const now = plan.nodes.get(ui.edit.id)?.data.label ?? ''
    if (b.dataset.conflict === 'theirs') ui.edit.value = now
    ui.edit.original = now
    render()
  })
  setupSearch(ui, (id) => {
    act({ type: 'selectNode', nodeId: id })
    focusSelected()
  })
  document.addEventListener('keydown', (e) => {
    const t = e.target as HTMLElement
    const typing = /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName) || (t as HTMLElement).isContentEditable
    if ($<HTMLDialogElement>('#dialog').open) return
    if (onDocumentKey(ui, e)) return
    if (!typing && e.key === '/') {
      e.preventDefault()
      $('#search').focus()
    } else if (!typing && e.key === '?') {
      e.preventDefault()
      openHelp()
    } else if (e.key === 'Escape' && ui.panelOpen && phone() && t.closest('#panel, #canvas')) closeDetails()
  })
}

// a #key= pasted into the address bar of an open page is read at once (no reload needed)
addEventListener('hashchange', () => {
  if (new URLSearchParams(location.hash.slice(1)).get('key')) void start()
})

void start()
