import { api, describe, q } from './api.ts'
import type { Ui } from './ctx.ts'
import { $, el } from './dom.ts'
import { TYPE_NAMES } from './model.ts'

/**
 * Search in the header (a combobox): the project's semantic search (GET /search), each result
 * with its path; ArrowDown walks the results, Enter chooses one: it is selected and revealed.
 */
interface Hit {
  node: { id: string; type: keyof typeof TYPE_NAMES; data: { label: string } }
  ancestors: { id: string; label: string }[]
}

export function setupSearch(ui: Ui, choose: (id: string) => void) {
  const input = $<HTMLInputElement>('#search')
  const list = $('#search-results')
  let hits: Hit[] = []
  let active = -1
  let timer: ReturnType<typeof setTimeout> | undefined
  let asked = 0
  const show = (open: boolean) => {
    list.hidden = !open
    input.setAttribute('aria-expanded', String(open))
  }
  const draw = (message?: string) => {
    list.replaceChildren(
      ...(message
        ? [el('div', { class: 'search-note', role: 'option', 'aria-disabled': 'true', text: message })]
        : hits.map((h, i) =>
            el(
              'div',
              {
                id: `hit-${i}`,
                role: 'option',
                'aria-selected': String(i === active),
                class: i === active ? 'active' : null,
                'data-id': h.node.id,
                onmousedown: (e: Event) => {
                  e.preventDefault()
                  pick(i)
                },
              },
              el('span', { class: `type ${h.node.type}`, text: TYPE_NAMES[h.node.type] }),
              el('span', { class: 'hit-label', text: h.node.data.label }),
              h.ancestors.length
                ? el('span', {
                    class: 'hit-path',
                    text: [...h.ancestors]
                      .reverse()
                      .map((a) => a.label)
                      .join(' › '),
                  })
                : null,
            ),
          )),
    )
    if (active >= 0) input.setAttribute('aria-activedescendant', `hit-${active}`)
    else input.removeAttribute('aria-activedescendant')
    show(true)
  }
  const run = async () => {
    const text = input.value.trim()
    if (!text) return show(false)
    const mine = ++asked
    try {
      const res = await api<{ results: Hit[] }>('GET', `/search?projectId=${q(ui.projectId)}&q=${q(text)}&limit=10`)
      if (mine !== asked) return
      hits = res.results
      active = hits.length ? 0 : -1
      draw(hits.length ? undefined : 'Nothing found.')
    } catch (err) {
      if (mine === asked) draw(describe(err))
    }
  }
  const pick = (i: number) => {
    const h = hits[i]
    if (!h) return
    show(false)
    input.value = ''
    choose(h.node.id)
  }
  input.addEventListener('input', () => {
    clearTimeout(timer)
    timer = setTimeout(() => void run(), 200)
  })
  input.addEventListener('keydown', (e) => {
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault()
      if (!hits.length) return
      active = (active + (e.key === 'ArrowDown' ? 1 : -1) + hits.length) % hits.length
      draw()
    } else if (e.key === 'Enter') {
      e.preventDefault()
      clearTimeout(timer)
      if (list.hidden || active < 0) void run()
      else pick(active)
    } else if (e.key === 'Escape') {
      e.stopPropagation()
      show(false)
      input.value = ''
      input.blur()
    }
  })
  input.addEventListener('blur', () => setTimeout(() => show(false), 150))
}
