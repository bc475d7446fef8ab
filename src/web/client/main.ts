/**
 * The live canvas (/app?projectId=…): the project's tree and matrix, driven by view commands and
 * kept live by one long poll (GET /view/commands: the queued commands, or a change of the tree,
 * and the page's heartbeat). After every change it reports what it shows (POST /view/report),
 * so GET /view-state reads back what the person sees.
 */
import { api, forgetKey, loadKey, q, Refused, setKey, Unauthorized } from './api.ts'
import type { Ui } from './chips.ts'
import { $, el } from './dom.ts'
import { renderMatrix } from './matrix.ts'
import { type Command, type Iteration, Plan, type PlanNode, type Shown, View } from './model.ts'
import { renderPanel } from './panel.ts'
import { renderTree } from './tree.ts'

const projectId = new URLSearchParams(location.search).get('projectId') ?? ''
const plan = new Plan()
const view = new View(plan)
/** the id of the newest command this page applied */
let applied = 0
/** the events cursor of the tree the page shows (from the long poll) */
let revision: string | undefined

const ui: Ui = { plan, view, act }

// --- rendering ------------------------------------------------------------------------------

function render() {
  document.body.dataset.mode = view.mode
  $('#mode-tree').classList.toggle('on', view.mode === 'tree')
  $('#mode-matrix').classList.toggle('on', view.mode === 'matrix')
  $('#mode-tree').setAttribute('aria-pressed', String(view.mode === 'tree'))
  $('#mode-matrix').setAttribute('aria-pressed', String(view.mode === 'matrix'))
  renderIterationPicker()
  const canvas = $('#canvas')
  const scroll = canvas.scrollTop
  canvas.replaceChildren(view.mode === 'tree' ? renderTree(ui) : renderMatrix(ui))
  canvas.scrollTop = scroll
  renderPanel(ui, $('#panel'))
  $('#panel').classList.toggle('has-node', !!view.selected)
  if (view.zoomTo) {
    const id = view.zoomTo
    view.zoomTo = null
    const target = document.querySelector<HTMLElement>(`[data-id="${CSS.escape(id)}"]`) ?? goalRowOf(id)
    if (target) {
      target.scrollIntoView({ block: 'center', inline: 'nearest' })
      target.classList.add('flash')
      setTimeout(() => target.classList.remove('flash'), 1400)
    }
  }
}

/** In the matrix a need or bet has no cell of its own: its goal's row stands in for it. */
function goalRowOf(id: string): HTMLElement | null {
  const goal = plan.goalOf(id)
  return goal ? document.querySelector<HTMLElement>(`[data-row="${CSS.escape(goal)}"]`) : null
}

function renderIterationPicker() {
  const select = $<HTMLSelectElement>('#iteration')
  const options = [
    el('option', { value: '', text: 'All iterations' }),
    ...plan
      .columns(view.iteration)
      .map((it: Iteration) =>
        el('option', { value: it.name, text: it.status === 'done' ? `${it.name} (done)` : it.name, selected: it.name === view.iteration }),
      ),
  ]
  select.replaceChildren(...options)
  select.value = view.iteration ?? ''
}

// --- acting and reporting ---------------------------------------------------------------------

let reportTimer: ReturnType<typeof setTimeout> | undefined

/** A click in the page: the same command an agent could send, applied at once, then reported. */
function act(c: Command) {
  view.apply(c)
  changed()
}

/** The person changed the view: show it, then report it (once for a burst of clicks). */
function changed() {
  render()
  if (revision === undefined) return // no live canvas on this plan: nothing to report to
  clearTimeout(reportTimer)
  reportTimer = setTimeout(() => void report(null).catch(() => {}), 150)
}

async function report(last: { id: number; type: string } | null) {
  const state: Shown = view.shown()
  await api('POST', '/view/report', { projectId, applied: last, state })
}

// --- data and the live loop -----------------------------------------------------------------

async function loadPlan() {
  const [n, it] = await Promise.all([
    api<{ nodes: PlanNode[] }>('GET', `/nodes?projectId=${q(projectId)}`),
    api<{ iterations: Iteration[] }>('GET', `/iterations?projectId=${q(projectId)}`),
  ])
  plan.set(n.nodes, it.iterations)
}

function setLive(state: 'live' | 'off' | 'retry', text: string) {
  $('#live').dataset.state = state
  $('#live-text').textContent = text
}

/**
 * One long poll at a time: it answers with the commands queued after `applied`, or when the tree
 * changed after `revision`, or after 8 s with nothing. Each call is also the page's heartbeat.
 */
async function live() {
  for (;;) {
    try {
      const res = await api<{ commands: (Command & { id: number })[]; revision: string }>(
        'GET',
        `/view/commands?projectId=${q(projectId)}&after=${applied}&wait=8000&revision=${q(revision ?? '')}`,
      )
      setLive('live', 'Live')
      const unknownTarget = res.commands.some((c) => c.nodeId && !plan.nodes.has(c.nodeId))
      const treeChanged = res.revision !== revision
      revision = res.revision
      let changed = false
      if (treeChanged || unknownTarget) {
        await loadPlan()
        changed = view.prune()
      }
      for (const c of res.commands) view.apply(c)
      const last = res.commands.at(-1)
      if (last) applied = last.id
      if (treeChanged || unknownTarget || last) render()
      if (last || changed) await report(last ? { id: last.id, type: last.type } : null)
    } catch (err) {
      if (err instanceof Unauthorized) return signIn('This API key is not valid any more (revoked or mistyped). Paste a current one.')
      if (err instanceof Refused && err.status === 403) return setLive('off', err.message)
      setLive('retry', 'Reconnecting…')
      await new Promise((r) => setTimeout(r, 2000))
    }
  }
}

// --- start ----------------------------------------------------------------------------------

function signIn(message: string) {
  forgetKey()
  $('#app').hidden = true
  $('#signin').hidden = false
  $('#signin-form').hidden = false
  $('#signin-title').textContent = 'Open the live canvas'
  $('#signin-message').textContent = message
  $<HTMLFormElement>('#signin-form').onsubmit = (e) => {
    e.preventDefault()
    setKey($<HTMLInputElement>('#signin-key').value)
    $('#signin').hidden = true
    void start()
  }
  $('#signin-key').focus()
}

async function pickProject() {
  $('#app').hidden = true
  $('#signin').hidden = false
  $('#signin-form').hidden = true
  $('#signin-title').textContent = 'Choose a project'
  try {
    const { projects } = await api<{ projects: { id: string; name: string }[] }>('GET', '/projects')
    $('#signin-message').textContent = projects.length ? 'Open one of your projects:' : 'You have no project yet.'
    $('.signin-card').append(
      el(
        'ul',
        { class: 'projects' },
        projects.map((p) =>
          el('li', {}, el('a', { href: `/app?projectId=${q(p.id)}`, text: p.name }), el('span', { class: 'sub', text: p.id })),
        ),
      ),
    )
  } catch (err) {
    if (err instanceof Unauthorized) return signIn('This API key is not valid. Paste a current one.')
    $('#signin-message').textContent = String((err as Error).message)
  }
}

async function start() {
  if (!loadKey())
    return signIn(
      'Paste an Arbor API key (arb_…) to open the live canvas. It stays in this browser and is sent only in the Authorization header.',
    )
  if (!projectId) return pickProject()
  $('#app').hidden = false
  $('#project-name').textContent = projectId
  try {
    const { projects } = await api<{ projects: { id: string; name: string }[] }>('GET', '/projects?includeArchived=true')
    const name = projects.find((p) => p.id === projectId)?.name ?? projectId
    $('#project-name').textContent = name
    document.title = `${name} · Arbor`
    // the revision is read before the plan, so a change in between is not missed
    revision = await api<{ revision: string }>('GET', `/view/commands?projectId=${q(projectId)}&wait=0`).then(
      (r) => r.revision,
      (err) => {
        if (err instanceof Refused && err.status === 403) return undefined // no live canvas on this plan: the plan alone
        throw err
      },
    )
    await loadPlan()
    // a reload shows what this project's canvas showed before, then the commands queued since
    if (revision !== undefined) view.adopt(await api<Shown>('GET', `/view-state?projectId=${q(projectId)}`))
    view.prune()
  } catch (err) {
    if (err instanceof Unauthorized) return signIn('This API key is not valid. Paste a current one.')
    $('#canvas').replaceChildren(el('p', { class: 'empty error', text: `Cannot open ${projectId}: ${(err as Error).message}` }))
    return setLive('off', 'Not connected')
  }
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
  $('#sign-out').onclick = () => signIn('Signed out. Paste an API key to open the canvas again.')
  render()
  if (revision === undefined) return setLive('off', 'View commands need the Builder or Team plan')
  setLive('live', 'Live') // the first long poll may wait its whole time before it answers
  void live()
}

void start()
