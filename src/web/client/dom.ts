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
