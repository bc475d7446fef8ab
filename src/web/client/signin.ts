import { api, forgetKey, q, setKey, Unauthorized } from './api.ts'
import { $, el } from './dom.ts'

/** What a refused key is told: that it failed, and where a key comes from. */
export const BAD_KEY =
  'This API key is not valid (revoked, expired, or mistyped). Paste a current one. The owner key is printed once, at the first start of the server; ' +
  '“arbor key mint” on the server makes another, and an owner can create keys in the app under Settings → API keys.'

/** The sign-in card: paste a key (it stays in this browser), then `start` again; an error is said as one. */
export function askForKey(message: string, start: () => void, error = false) {
  forgetKey()
  $('#app').hidden = true
  $('#signin').hidden = false
  $('#signin-form').hidden = false
  $('#signin-title').textContent = 'Open Arbor'
  $('#signin-message').textContent = message
  $('#signin-message').classList.toggle('error', error)
  if (error) $('#signin-message').setAttribute('role', 'alert')
  else $('#signin-message').removeAttribute('role')
  $<HTMLFormElement>('#signin-form').onsubmit = (e) => {
    e.preventDefault()
    setKey($<HTMLInputElement>('#signin-key').value)
    $('#signin').hidden = true
    start()
  }
  $('#signin-key').focus()
}

/** No projectId in the address: the person's projects to open. */
export async function chooseProject(signIn: (message: string, error?: boolean) => void, newProject: () => void) {
  $('#signin-message').classList.remove('error')
  $('#signin-message').removeAttribute('role')
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
    if (err instanceof Unauthorized) return signIn(BAD_KEY, true)
    $('#signin-message').textContent = String((err as Error).message)
  }
}
