/** Building the page: every value goes in as text (textContent or an attribute), never as HTML. */
type Attrs = Record<string, string | number | boolean | null | undefined | ((e: Event) => void)>
type Kid = Node | string | null | undefined | false | Kid[]

export function el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...kids: Kid[]): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag)
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue
    if (k === 'class') node.className = String(v)
    else if (k === 'text') node.textContent = String(v)
    else if (typeof v === 'function') node.addEventListener(k.slice(2), v)
    else node.setAttribute(k, v === true ? '' : String(v))
  }
  append(node, kids)
  return node
}

function append(node: Node, kids: Kid[]) {
  for (const kid of kids) {
    if (kid === null || kid === undefined || kid === false) continue
    if (Array.isArray(kid)) append(node, kid)
    else node.appendChild(typeof kid === 'string' ? document.createTextNode(kid) : kid)
  }
}

export const $ = <T extends HTMLElement = HTMLElement>(selector: string) => document.querySelector<T>(selector)!

export const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`

/** How long ago `iso` was, in words; past a day, the moment as `older` writes it (the date, by default). */
export function ago(iso: string, older = (d: Date) => d.toLocaleDateString()): string {
  const s = Math.max(0, (Date.now() - Date.parse(iso)) / 1000)
  if (s < 60) return 'just now'
  if (s < 3600) return `${Math.floor(s / 60)} min ago`
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`
  return older(new Date(iso))
}

/** What a dry run found in the way (a revert's conflicts, a proposal's), under its heading, as an alert; nothing when it found none. */
export const conflictList = (heading: string, lines: string[]) =>
  lines.length
    ? el(
        'div',
        { class: 'field-error', role: 'alert' },
        el('p', { text: heading }),
        el(
          'ul',
          {},
          lines.map((t) => el('li', { text: t })),
        ),
      )
    : null

/** The quiet button that closes a dry run's plan or a proposal being read. */
export const closeButton = (text: string, close: () => void) => el('button', { type: 'button', class: 'quiet', text, onclick: close })

/** The × that closes a column beside the tree (the details, the review, the proposals). */
export const closeColumn = (id: string, what: string, close: () => void, title?: string) =>
  el('button', { type: 'button', class: 'close quiet', id, 'aria-label': `Close the ${what}`, title, text: '×', onclick: close })

/** A revert's confirmation after its dry run: plain, or the danger of overwriting what changed since when it found conflicts. */
export const revertButton = (name: string, conflicts: boolean, onclick: () => void) =>
  el('button', {
    type: 'button',
    class: conflicts ? `danger ${name}` : name,
    text: conflicts ? 'Revert anyway (later changes are overwritten)' : 'Revert',
    onclick,
  })

/** The page's status line: `say(text)` shows it, with an Undo button when `undo` is given, for 12 s. */
export function statusLine(box: () => HTMLElement) {
  let timer: ReturnType<typeof setTimeout> | undefined
  return (text: string, undo?: () => void) => {
    const line = box()
    line.replaceChildren(
      el('span', { text }, undo ? el('button', { type: 'button', id: 'undo', class: 'link', text: 'Undo (Ctrl+Z)', onclick: undo }) : null),
    )
    clearTimeout(timer)
    timer = setTimeout(() => line.replaceChildren(), 12_000)
  }
}

/** The list entries of the columns beside the tree: a Review group, a proposal, a node's change. */
const ENTRY = ['data-request', 'data-proposal', 'data-change']

/** A selector that finds a focused control again after a redraw: its id, or its classes within its list entry. */
export function focusKey(e: HTMLElement): string | null {
  if (e.id) return `#${CSS.escape(e.id)}`
  if (!e.classList.length) return null
  const entry = e.closest<HTMLElement>(ENTRY.map((a) => `[${a}]`).join(','))
  const attr = entry ? ENTRY.find((a) => entry.hasAttribute(a)) : undefined
  const within = entry && attr ? `[${attr}="${CSS.escape(entry.getAttribute(attr) ?? '')}"] ` : ''
  return `${within}${e.tagName.toLowerCase()}.${[...e.classList].map((c) => CSS.escape(c)).join('.')}`
}

/**
 * Draw `box` again (`draw` replaces its children), the keyboard focus kept on the same control
 * when it was inside: a redraw would otherwise leave it on <body>, and a keyboard at the page's start.
 */
export function keepingFocus(box: HTMLElement, draw: () => void) {
  const had = document.activeElement
  const key = had instanceof HTMLElement && had !== box && box.contains(had) ? focusKey(had) : null
  draw()
  if (key && !box.contains(document.activeElement)) box.querySelector<HTMLElement>(key)?.focus()
}

/** Give the focus to the first element in `box` that `selectors` (in their order of preference) find; true when one was. */
export function focusFirst(box: ParentNode, ...selectors: string[]): boolean {
  for (const s of selectors) {
    const e = box.querySelector<HTMLElement>(s)
    if (e) {
      e.focus()
      return true
    }
  }
  return false
}
