import { api, describe, mutate, q } from './api.ts'
import { openDialog } from './dialogs.ts'
import { el } from './dom.ts'

/**
 * Projects from the app: the switcher (every project this key can open, and "New project") and
 * the new-project dialog (a name, an id suggested from it, and the plan's project limit in words).
 * A created project opens at once.
 */
interface ProjectRow {
  id: string
  name: string
  archived?: boolean
  role?: string
}
interface TierStatus {
  tier: string
  limits: { max_projects: number | null; node_cap: number | null }
}

const listProjects = () => api<{ projects: ProjectRow[] }>('GET', '/projects?includeArchived=true').then((r) => r.projects)

/** The id addProject needs (2 to 63 lowercase letters, digits and dashes), made from a name. */
export function suggestId(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+/, '')
    .slice(0, 63)
    .replace(/-+$/, '')
  return slug.length >= 2 ? slug : slug ? `${slug}-project` : ''
}

/** The plan's project limit in words, with how many the person already owns. */
export function limitInWords(status: TierStatus, owned: number): string {
  const max = status.limits.max_projects
  const plan = `The ${status.tier} plan`
  // unlimited (a self-hosted server's owner): no plan to name
  if (max === null) return `No limit on projects here; you own ${owned}.`
  if (max === 0) return `${plan} of this key cannot create projects; a team project's owner can add you to theirs.`
  const cap = status.limits.node_cap ? ` of up to ${status.limits.node_cap} items each` : ''
  const full = owned >= max ? ' You are at the limit: archive one in the API, or move to a paid plan, to create another.' : ''
  return `${plan} allows ${max} project${max === 1 ? '' : 's'}${cap}; you own ${owned}.${full}`
}

/** The switcher: the projects this key can open (the current one marked), and "New project". */
export async function openProjects(current: string) {
  let projects: ProjectRow[] | null = null
  let error = ''
  const draw = openDialog('Projects', () => [
    error ? el('p', { class: 'field-error', role: 'alert', text: error }) : null,
    projects === null
      ? el('p', { class: 'sub', text: 'Loading…' })
      : projects.length
        ? el(
            'ul',
            { class: 'projects', 'aria-label': 'Your projects' },
            projects.map((p) =>
              el(
                'li',
                {},
                el('a', { href: `/app?projectId=${q(p.id)}`, 'aria-current': p.id === current ? 'page' : null, text: p.name }),
                el('span', { class: 'sub', text: `${p.id}${p.archived ? ' · archived' : ''}${p.role === 'member' ? ' · member' : ''}` }),
              ),
            ),
          )
        : el('p', { class: 'sub', text: 'You have no project yet.' }),
    el(
      'div',
      { class: 'dialog-actions' },
      el('button', { type: 'button', class: 'primary', id: 'new-project', text: 'New project', onclick: () => void openNewProject() }),
    ),
  ])
  try {
    projects = await listProjects()
  } catch (err) {
    error = describe(err)
  }
  // nothing to draw or focus once "New project" (or Escape) took the dialog meanwhile
  if (draw()) document.querySelector<HTMLElement>('#dialog [aria-current=page], #dialog .projects a, #new-project')?.focus()
}

/** The new-project dialog; on success the page opens the project. */
export async function openNewProject() {
  const name = el('input', { id: 'np-name', type: 'text', autocomplete: 'off', maxlength: 200, required: true })
  const id = el('input', {
    id: 'np-id',
    type: 'text',
    autocomplete: 'off',
    spellcheck: 'false',
    maxlength: 63,
    pattern: '[a-z0-9][a-z0-9\\-]{1,62}',
    'aria-describedby': 'np-id-hint',
  })
  const limit = el('p', { id: 'np-limit', class: 'sub', text: 'Reading your plan…' })
  const error = el('p', { id: 'np-error', class: 'field-error', role: 'alert' })
  let idEdited = false
  name.addEventListener('input', () => {
    if (!idEdited) id.value = suggestId(name.value)
  })
  id.addEventListener('input', () => {
    idEdited = id.value !== ''
  })
  const form = el(
    'form',
    { class: 'new-project', novalidate: true },
    el('label', { for: 'np-name', text: 'Name' }),
    name,
    el('label', { for: 'np-id', text: 'Id' }),
    id,
    el('p', {
      id: 'np-id-hint',
      class: 'sub',
      text: 'Suggested from the name; lowercase letters, digits and dashes. It goes in every API call and never changes.',
    }),
    limit,
    error,
    el('div', { class: 'dialog-actions' }, el('button', { type: 'submit', class: 'primary', id: 'np-create', text: 'Create project' })),
  )
  form.addEventListener('submit', (e) => {
    e.preventDefault()
    void create()
  })
  async function create() {
    const project = { name: name.value.trim(), id: id.value.trim() }
    if (!project.name) {
      error.textContent = 'A name is needed.'
      return name.focus()
    }
    error.textContent = ''
    try {
      const res = await mutate<{ project: { id: string } }>({
        action: 'addProject',
        project: project.id ? project : { name: project.name },
      })
      location.assign(`/app?projectId=${q(res.project.id)}`)
    } catch (err) {
      error.textContent = describe(err)
    }
  }
  openDialog('New project', () => [form])
  name.focus()
  try {
    const [status, projects] = await Promise.all([api<TierStatus>('GET', '/tier-status'), listProjects()])
    limit.textContent = limitInWords(status, projects.filter((p) => p.role !== 'member').length)
  } catch (err) {
    limit.textContent = `Your plan's project limit could not be read: ${describe(err)}`
  }
}
