import { remove, saveEdit, startAdd, startRename, toggleDone, undoLast } from './actions.ts'
import type { Ui } from './ctx.ts'

/**
 * The keys of the tree (WAI-ARIA tree pattern) and of the matrix's cards (arrows move by where
 * the cards are), plus the edit keys both share. Nothing here fires while typing in a field.
 */
export const typing = (t: EventTarget | null) =>
  t instanceof HTMLElement && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName))

let buffer = ''
let bufferAt = 0
/** the item type-ahead left the focus on: a key on any other item (clicked, or reached another way) starts afresh */
let bufferOn: string | undefined

export function onCanvasKey(ui: Ui, e: KeyboardEvent, helpers: { openDetails: () => void }) {
  if (e.target instanceof HTMLInputElement && e.target.id === 'edit-label') return onEditKey(ui, e)
  if (typing(e.target)) return
  const item = (e.target as HTMLElement).closest<HTMLElement>('[role=treeitem],[data-card]')
  if (!item) return
  const id = item.dataset.id
  if (id !== bufferOn) buffer = ''
  const n = id ? ui.plan.nodes.get(id) : undefined
  const inTree = item.getAttribute('role') === 'treeitem'
  const items = [...document.querySelectorAll<HTMLElement>(inTree ? '#tree [role=treeitem][data-id]' : '[data-card]')]
  const go = (to: HTMLElement | undefined | null) => {
    if (to?.dataset.id) ui.select(to.dataset.id)
  }
  const mod = e.ctrlKey || e.metaKey || e.altKey
  let handled = true
  if (mod)
    handled = false // Ctrl+Z / ⌘Z is the document's (onDocumentKey), wherever the focus is
  else if (inTree && e.key === 'ArrowDown') go(items[items.indexOf(item) + 1])
  else if (inTree && e.key === 'ArrowUp') go(items[items.indexOf(item) - 1])
  else if (!inTree && e.key.startsWith('Arrow')) go(nearest(item, items, e.key))
  else if (e.key === 'Home') go(items[0])
  else if (e.key === 'End') go(items.at(-1))
  else if (inTree && e.key === 'ArrowRight' && n) {
    if (item.getAttribute('aria-expanded') === 'false') ui.act({ type: 'expandNode', nodeId: n.id })
    else if (item.getAttribute('aria-expanded') === 'true') go(item.querySelector<HTMLElement>('[role=group] > [role=treeitem]'))
  } else if (inTree && e.key === 'ArrowLeft' && n) {
    if (item.getAttribute('aria-expanded') === 'true') ui.act({ type: 'collapseNode', nodeId: n.id })
    else go(item.parentElement?.closest<HTMLElement>('[role=treeitem]'))
  } else if (n && (e.key === 'F2' || (inTree && e.key === 'Enter'))) startRename(ui, n)
  else if (n && !inTree && e.key === 'Enter') helpers.openDetails()
  else if (n && e.key === ' ') helpers.openDetails()
  else if (n && (e.key === 'Delete' || e.key === 'Backspace'))
    void remove(ui, n) // a Mac keyboard has no Delete key
  else if (e.key === 'a' && !typeAhead()) startAdd(ui, n ?? null, false)
  else if (e.key === 'A') startAdd(ui, n ?? null, true)
  else if (n && e.key === 'x' && !typeAhead()) void toggleDone(ui, n)
  else if (e.key === '*' && n && inTree) ui.act({ type: 'expandAll', nodeId: n.parentId ?? n.id })
  else if (e.key.length === 1 && /\S/.test(e.key) && e.key !== '/' && e.key !== '?') go(find(items, item, e.key))
  else handled = false
  if (handled) {
    e.preventDefault()
    e.stopPropagation()
  }
}

/**
 * Ctrl+Z / ⌘Z anywhere on the page outside a text field (and outside a dialog): undo the last
 * change this page made. True when it was the undo key, so the caller stops there.
 */
export function onDocumentKey(ui: Ui, e: KeyboardEvent): boolean {
  if (!(e.ctrlKey || e.metaKey) || e.shiftKey || e.altKey || e.key.toLowerCase() !== 'z' || typing(e.target)) return false
  e.preventDefault()
  void undoLast(ui)
  return true
}

/** Within half a second of a type-ahead letter, `a` and `x` are letters of the word being typed. */
const typeAhead = () => buffer !== '' && Date.now() - bufferAt < 500

function find(items: HTMLElement[], from: HTMLElement, ch: string): HTMLElement | undefined {
  const now = Date.now()
  buffer = now - bufferAt < 500 ? buffer + ch.toLowerCase() : ch.toLowerCase()
  bufferAt = now
  const label = (x: HTMLElement) => (x.querySelector('.label')?.textContent ?? '').toLowerCase()
  const start = items.indexOf(from) + (buffer.length === 1 ? 1 : 0)
  const order = [...items.slice(start), ...items.slice(0, start)]
  const found = order.find((x) => label(x).startsWith(buffer))
  bufferOn = (found ?? from).dataset.id
  return found
}

/** The card nearest in the direction of the arrow, by the cards' places on the screen. */
function nearest(from: HTMLElement, items: HTMLElement[], key: string): HTMLElement | undefined {
  const a = from.getBoundingClientRect()
  const [ax, ay] = [a.left + a.width / 2, a.top + a.height / 2]
  let best: HTMLElement | undefined
  let bestScore = Number.POSITIVE_INFINITY
  for (const x of items) {
    if (x === from) continue
    const b = x.getBoundingClientRect()
    const [dx, dy] = [b.left + b.width / 2 - ax, b.top + b.height / 2 - ay]
    const along = key === 'ArrowRight' ? dx : key === 'ArrowLeft' ? -dx : key === 'ArrowDown' ? dy : -dy
    const across = key === 'ArrowRight' || key === 'ArrowLeft' ? Math.abs(dy) : Math.abs(dx)
    if (along <= 4) continue
    const score = along + across * 2
    if (score < bestScore) [best, bestScore] = [x, score]
  }
  return best
}

function onEditKey(ui: Ui, e: KeyboardEvent) {
  if (e.key === 'Enter') {
    e.preventDefault()
    void saveEdit(ui)
  } else if (e.key === 'Escape') {
    e.preventDefault()
    const back = ui.edit?.id ?? ui.edit?.parentId ?? null
    ui.edit = null
    if (back) ui.view.selected = back
    ui.render()
  }
  e.stopPropagation()
}
