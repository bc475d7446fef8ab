import { api, describe, mutate, q, Refused } from './api.ts'
import type { Ui } from './ctx.ts'
import { $, el } from './dom.ts'
import { conflictWords, takeStale } from './stale-words.ts'

/** how many dialogs were opened so far: the last one opened is the one shown, if any */
let opened = 0

/**
 * One modal at a time (<dialog>: it keeps the focus inside, Escape closes it, focus returns after).
 * Returns `redraw`, which draws the body again (after an answer arrives) while this dialog is still
 * the one shown, and returns whether it did: once another dialog took its place, or it was closed,
 * a late answer (the project list arriving after "New project" was pressed) draws nothing over it.
 */
export function openDialog(title: string, body: () => (HTMLElement | null)[], onClose?: () => void): () => boolean {
  const dialog = $<HTMLDialogElement>('#dialog')
  const back = document.activeElement as HTMLElement | null
  const mine = ++opened
  const draw = () =>
    dialog.replaceChildren(
      el(
        'div',
        { class: 'dialog-head' },
        el('h2', { id: 'dialog-title', text: title }),
        el('button', { type: 'button', class: 'quiet close', 'aria-label': 'Close', text: '×', onclick: () => dialog.close() }),
      ),
      ...body().filter((x): x is HTMLElement => x !== null),
    )
  draw()
  dialog.onclose = () => {
    onClose?.()
    // The browser gives the focus back as the dialog closes, and fires `close` a frame later: a key
    // pressed in between (Escape, then at once Home) has moved the focus on, and it stays there.
    // Only a focus left nowhere (on <body>, or in the closed dialog) is put back here.
    const now = document.activeElement
    if (now && now !== document.body && !dialog.contains(now)) return
    // the element that had the focus may have been redrawn meanwhile (a live change): then the plan's tab stop
    if (back?.isConnected) back.focus()
    else document.querySelector<HTMLElement>('#canvas [tabindex="0"]')?.focus()
  }
  // the WAI-ARIA dialog pattern: Tab and Shift+Tab go round inside the dialog, never out of it
  dialog.onkeydown = (e) => {
    if (e.key !== 'Tab') return
    const stops = [...dialog.querySelectorAll<HTMLElement>('button, input, select, textarea, a[href], [tabindex="0"]')].filter(
      (x) => !(x as HTMLButtonElement).disabled && x.offsetParent !== null,
    )
    const first = stops[0]
    const last = stops.at(-1)
    if (!first || !last) return
    if (e.shiftKey && (document.activeElement === first || !dialog.contains(document.activeElement))) {
      e.preventDefault()
      last.focus()
    } else if (!e.shiftKey && (document.activeElement === last || !dialog.contains(document.activeElement))) {
      e.preventDefault()
      first.focus()
    }
  }
  if (!dialog.open) dialog.showModal()
  return () => {
    if (mine !== opened || !dialog.open) return false
    draw()
    return true
  }
}

/** Every key of the app (keyboard.ts, main.ts, search.ts): the `?` overlay lists them all. */
export const KEYS: [string, string][] = [
  ['Tab', "from the page's start: to the plan; then on to the details and the header"],
  ['↑ ↓', 'previous / next item'],
  ['→', 'expand, or go to the first child'],
  ['←', 'collapse, or go to the parent'],
  ['Home / End', 'first / last item'],
  ['letters', 'jump to the next item starting with them'],
  ['*', 'expand this item, its siblings and everything beneath them'],
  ['Enter or F2', 'rename in place (Enter saves, Escape cancels); in the matrix Enter opens the card'],
  ['Space', 'open the details'],
  ['a', 'add a child of the next type (goal → need → bet → job; a bet is what the API calls an approach)'],
  ['Shift+A', 'add a sibling'],
  ['x', 'mark a job or task done, or open again'],
  ['Delete or Backspace', 'delete (with everything beneath it)'],
  ['Ctrl+Z / ⌘Z', 'undo your last change (again: the one before), wherever the focus is outside a text field'],
  ['/', 'search'],
  ['Escape', 'close the details, a dialog or the search; put down a dry run or a proposal; close Activity, Review or Proposals'],
  ['?', 'this list'],
]

export function openHelp() {
  openDialog('Keyboard', () => [
    el(
      'dl',
      { class: 'keys' },
      KEYS.flatMap(([k, v]) => [el('dt', {}, el('kbd', { text: k })), el('dd', { text: v })]),
    ),
    el('p', { class: 'sub', text: 'In the matrix the arrow keys move between cards by where they are; the other keys work the same.' }),
  ])
}

/** Iterations: add, rename, complete or reopen, reorder, delete. */
export function openIterations(ui: Ui, reload: () => Promise<void>) {
  let error = ''
  const run = async (body: Record<string, unknown>) => {
    // an edit of one iteration carries the rev the dialog showed (ifRev, live.md 1)
    const rev = ui.plan.iterations.find((i) => i.name === body.iterationName)?.rev
    try {
      await mutate({ projectId: ui.projectId, ...body, ...(rev && body.iterationName ? { ifRev: rev } : {}) })
      error = ''
      await reload()
    } catch (err) {
      const stale = takeStale(ui, err)
      // changed by someone else meanwhile: say who and what, show theirs; doing it again keeps yours
      error = stale
        ? `Not changed: ${stale.map((c) => conflictWords(ui, c)).join(' ')} It shows theirs now; do it again to keep yours.`
        : describe(err)
      if (stale) await reload().catch(() => {})
    }
    draw()
    ui.render()
  }
  const draw = openDialog('Iterations', () => {
    const its = ui.plan.iterations
    const order = its.map((i) => i.name)
    const move = (i: number, by: number) => {
      const next = [...order]
      ;[next[i], next[i + by]] = [next[i + by]!, next[i]!]
      void run({ action: 'reorderIterations', order: next })
    }
    const add = el('input', {
      id: 'iteration-new',
      type: 'text',
      'aria-label': 'New iteration name',
      placeholder: 'New iteration',
      autocomplete: 'off',
    })
    return [
      error ? el('p', { class: 'field-error', role: 'alert', text: error }) : null,
      el(
        'ul',
        { class: 'iterations' },
        its.map((it, i) => {
          const name = el('input', { type: 'text', value: it.name, 'aria-label': `Name of ${it.name}`, disabled: it.system })
          name.addEventListener(
            'change',
            () => void run({ action: 'updateIteration', iterationName: it.name, data: { name: name.value.trim() } }),
          )
          return el(
            'li',
            { class: it.status === 'done' ? 'is-done' : null },
            name,
            el('span', { class: 'chip', text: it.system ? 'system' : it.status }),
            it.system
              ? null
              : el('button', {
                  type: 'button',
                  text: it.status === 'done' ? 'Reopen' : 'Complete',
                  onclick: () =>
                    void run({
                      action: 'updateIteration',
                      iterationName: it.name,
                      data: { status: it.status === 'done' ? 'active' : 'done' },
                    }),
                }),
            el('button', { type: 'button', 'aria-label': `Move ${it.name} up`, text: '↑', disabled: i === 0, onclick: () => move(i, -1) }),
            el('button', {
              type: 'button',
              'aria-label': `Move ${it.name} down`,
              text: '↓',
              disabled: i === its.length - 1,
              onclick: () => move(i, 1),
            }),
            it.system
              ? null
              : el('button', {
                  type: 'button',
                  class: 'danger',
                  'aria-label': `Delete ${it.name}`,
                  text: 'Delete',
                  onclick: () => void run({ action: 'deleteIteration', iterationName: it.name }),
                }),
          )
        }),
      ),
      el(
        'form',
        {
          class: 'inline',
          onsubmit: (e: Event) => {
            e.preventDefault()
            if (add.value.trim()) void run({ action: 'addIteration', iteration: { name: add.value.trim() } })
          },
        },
        add,
        el('button', { type: 'submit', class: 'primary', text: 'Add' }),
      ),
    ]
  })
}

type Role = 'read' | 'propose' | 'work' | 'write'

interface Key {
  keyId: string
  label: string | null
  prefix: string
  createdAt: string
  lastUsedAt: string | null
  current: boolean
  /** live.md §6: {role:'write'} for a key minted without one */
  scope?: { role: Role; projects?: string[] }
}

/**
 * What each role may (live.md §6), in the words of the server's refusals (ROLE_MAY,
 * src/accounts/scope.ts; test/app.keys.test.ts holds them equal).
 */
export const ROLE_MAY: Record<Role, string> = {
  read: 'every read (GET), the stream, presence without a field, and POST /feedback; nothing else',
  propose: 'what read may, presence with a field, and propose and withdrawProposal of its own proposals',
  work: "what propose may, claim, renewClaim, releaseClaim, and update of a node whose live claim this key holds (sent with that claim's token)",
  write: 'everything its user may',
}
const ROLES = Object.keys(ROLE_MAY) as Role[]
/** The most projects one key may be limited to. */
const MAX_KEY_PROJECTS = 50

const scopeText = (scope: Key['scope']) => `${scope?.role ?? 'write'} · ${scope?.projects ? scope.projects.join(', ') : 'all projects'}`

/** Settings → API keys: the person's own keys; a new one is shown once, with a copy button. */
export function openKeys() {
  let keys: Key[] | null = null
  let projects: { id: string; name: string }[] = []
  let error = ''
  let created: string | null = null
  /** this browser's key may not manage keys (live.md §6): the server's words, and no list or form */
  let scoped = ''
  const load = async () => {
    try {
      ;[keys, projects] = await Promise.all([
        api<{ keys: Key[] }>('GET', '/keys').then((r) => r.keys),
        api<{ projects: { id: string; name: string }[] }>('GET', '/projects').then((r) => r.projects),
      ])
    } catch (err) {
      if (err instanceof Refused && err.code === 'key_scope') scoped = err.message
      else error = describe(err)
    }
    draw()
  }
  const label = el('input', {
    id: 'key-label',
    type: 'text',
    'aria-label': 'Label of the new key',
    placeholder: 'Label, e.g. laptop agent',
    maxlength: 100,
    autocomplete: 'off',
  })
  // the new key's role and projects: kept across redraws (the form is drawn again with the list)
  let role: Role = 'write'
  const only = new Set<string>()
  const create = async (e: Event) => {
    e.preventDefault()
    if (only.size > MAX_KEY_PROJECTS) {
      error = `A key may be limited to at most ${MAX_KEY_PROJECTS} projects; ${only.size} are ticked.`
      draw()
      return
    }
    const scope = role === 'write' && only.size === 0 ? undefined : { role, ...(only.size ? { projects: [...only] } : {}) }
    try {
      const res = await api<{ apiKey: string }>('POST', '/keys', {
        ...(label.value.trim() ? { label: label.value.trim() } : {}),
        ...(scope ? { scope } : {}),
      })
      created = res.apiKey
      label.value = ''
      role = 'write'
      only.clear()
      error = ''
    } catch (err) {
      error = describe(err)
    }
    await load()
    document.querySelector<HTMLElement>('#key-created')?.focus()
  }
  // a second press confirms (no window.confirm: it would stop a keyboard and a test alike)
  let confirming: string | null = null
  const revoke = async (k: Key) => {
    if (confirming !== k.keyId) {
      confirming = k.keyId
      draw()
      document.querySelector<HTMLElement>(`[data-key="${CSS.escape(k.keyId)}"] button`)?.focus()
      return
    }
    confirming = null
    try {
      await api('DELETE', `/keys?keyId=${q(k.keyId)}`)
      error = ''
    } catch (err) {
      error = describe(err)
    }
    await load()
  }
  const keysPanel = () => [
    el('p', { class: 'sub', text: 'Keys let agents and scripts act as you. A new key is shown once: copy it then.' }),
    error ? el('p', { class: 'field-error', role: 'alert', text: error }) : null,
    created
      ? el(
          'div',
          { class: 'created' },
          el('label', { for: 'key-created', text: 'Your new key (shown once):' }),
          el('input', { id: 'key-created', type: 'text', readonly: true, value: created }),
          el('button', { type: 'button', id: 'key-copy', text: 'Copy', onclick: () => copy(created!) }),
        )
      : null,
    keys === null
      ? el('p', { text: 'Loading…' })
      : el(
          'table',
          { class: 'keys-table' },
          el(
            'thead',
            {},
            el(
              'tr',
              {},
              ['Label', 'Key', 'May', 'Created', 'Last used', ''].map((h) => el('th', { text: h })),
            ),
          ),
          el(
            'tbody',
            {},
            keys.map((k) =>
              el(
                'tr',
                { 'data-key': k.keyId },
                el('td', { text: `${k.label ?? '—'}${k.current ? ' (this browser)' : ''}` }),
                el('td', {}, el('code', { text: `${k.prefix}…` })),
                el('td', { class: 'key-scope', title: ROLE_MAY[k.scope?.role ?? 'write'], text: scopeText(k.scope) }),
                el('td', { text: new Date(k.createdAt).toLocaleDateString() }),
                el('td', { text: k.lastUsedAt ? new Date(k.lastUsedAt).toLocaleString() : 'never' }),
                el(
                  'td',
                  {},
                  el('button', {
                    type: 'button',
                    class: 'danger',
                    text: confirming === k.keyId ? 'Press again to revoke' : 'Revoke',
                    'aria-label':
                      confirming === k.keyId
                        ? `Press again to revoke ${k.label ?? k.prefix}; it stops working at once`
                        : `Revoke ${k.label ?? k.prefix}`,
                    onclick: () => void revoke(k),
                  }),
                ),
              ),
            ),
          ),
        ),
    el(
      'form',
      { class: 'key-form', onsubmit: create },
      el('h3', { text: 'New key' }),
      label,
      el(
        'fieldset',
        { class: 'key-roles' },
        el('legend', { text: 'What it may do' }),
        ...ROLES.map((r) =>
          el(
            'label',
            { class: 'key-role' },
            el('input', {
              type: 'radio',
              name: 'key-role',
              value: r,
              id: `key-role-${r}`,
              checked: role === r,
              'aria-describedby': `key-role-${r}-may`,
              onchange: () => {
                role = r
              },
            }),
            el('strong', { text: r }),
            el('span', { class: 'may', id: `key-role-${r}-may`, text: ROLE_MAY[r] }),
          ),
        ),
      ),
      projects.length
        ? el(
            'fieldset',
            { class: 'key-projects' },
            el('legend', { text: 'Only these projects (none ticked: every project you can reach)' }),
            ...projects.map((p) =>
              el(
                'label',
                { class: 'check' },
                el('input', {
                  type: 'checkbox',
                  value: p.id,
                  checked: only.has(p.id),
                  onchange: (e: Event) => {
                    if ((e.target as HTMLInputElement).checked) only.add(p.id)
                    else only.delete(p.id)
                  },
                }),
                ` ${p.name}`,
              ),
            ),
          )
        : null,
      el('p', {
        class: 'sub',
        text: 'Only a key that may do everything on every project (write, no project ticked) can list, create or revoke keys.',
      }),
      el('button', { type: 'submit', id: 'key-create', class: 'primary', text: 'Create key' }),
    ),
  ]
  const draw = openDialog('Settings · API keys', () => {
    if (scoped)
      return [
        el('p', { class: 'sub', text: 'Keys let agents and scripts act as you.' }),
        el('p', {
          role: 'alert',
          text: 'This browser is signed in with a key that may not list, create or revoke keys. Sign in with a key of role write that is not limited to some projects to manage keys.',
        }),
        el('p', { class: 'sub', text: scoped }),
      ]
    return keysPanel()
  })
  void load()
}

function copy(text: string) {
  const input = document.querySelector<HTMLInputElement>('#key-created')
  if (navigator.clipboard) void navigator.clipboard.writeText(text).catch(() => input?.select())
  else input?.select() // an http:// page on a LAN has no clipboard API: selected, for Ctrl+C
  const b = document.querySelector('#key-copy')
  if (b) b.textContent = 'Copied'
}
