import { api, forgetKey, q, setKey, Unauthorized } from './api.ts'
import { $, el } from './dom.ts'

/** The sign-in card: paste a key (it stays in this browser), then `start` again. */
export function askForKey(message: string, start: () => void) {
  forgetKey()
  $('#app').hidden = true
  $('#signin').hidden = false
  $('#signin-form').hidden = false
  $('#signin-title').textContent = 'Open Arbor'
  $('#signin-message').textContent = message
  $<HTMLFormElement>('#signin-form').onsubmit = (e) => {
    e.preventDefault()
    setKey($<HTMLInputElement>('#signin-key').value)
    $('#signin').hidden = true
    start()
  }
  $('#signin-key').focus()
}

/** No projectId in the address: the person's projects to open. */
export async function chooseProject(signIn: (message: string) => void, newProject: () => void) {
  $('#app').hidden = true
  $('#signin').hidden = false
  $('#signin-form').hidden = true
  $('#signin-title').textContent = 'Choose a project'
  try {
    const { projects } = await api<{ projects: { id: string; name: string }[] }>('GET', '/projects')
    $('#signin-message').textContent = projects.length
      ? 'Open one of your projects, or create one:'
      : 'You have no project yet: create the first one.'
    for (const old of document.querySelectorAll('.signin-card .projects, #signin-new-project')) old.remove()
    $('.signin-card').append(
      el(
        'ul',
        { class: 'projects' },
        projects.map((p) =>
          el('li', {}, el('a', { href: `/app?projectId=${q(p.id)}`, text: p.name }), el('span', { class: 'sub', text: p.id })),
        ),
      ),
      el('button', {
        type: 'button',
        class: projects.length ? '' : 'primary',
        id: 'signin-new-project',
        text: 'New project',
        onclick: newProject,
      }),
    )
    if (!projects.length) $('#signin-new-project').focus()
  } catch (err) {
    if (err instanceof Unauthorized) return signIn('This API key is not valid. Paste a current one.')
    $('#signin-message').textContent = String((err as Error).message)
  }
}
