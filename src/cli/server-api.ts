import type { Config } from '../config'
import { CliError } from './args'

/**
 * A running Arbor, as the CLI reaches it: `--url`, or this machine on the configured PORT.
 * Admin commands authenticate with ADMIN_TOKEN (docs/operations.md); the rest with an API key.
 */
export interface Server {
  url: string
  /** one JSON call; a refusal or an unreachable server is a CliError naming the fix */
  call<T = unknown>(method: string, path: string, body?: unknown): Promise<T>
  fetch: (path: string) => Promise<Response>
}

export const serverUrl = (config: Config, url?: string) => (url ?? `http://127.0.0.1:${config.port}`).replace(/\/+$/, '')

/** True when an Arbor answers /healthz at `url` within a second. */
export async function isUp(url: string): Promise<boolean> {
  try {
    const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1000) })
    return res.ok && ((await res.json()) as { status?: string }).status === 'ok'
  } catch {
    return false // not listening, or not an Arbor: the caller says what to do
  }
}

export function adminServer(config: Config, url?: string): Server {
  if (!config.adminToken)
    throw new CliError("ADMIN_TOKEN is not set: set it to the server's ADMIN_TOKEN (the admin API is off on a server without one)")
  return connect(serverUrl(config, url), config.adminToken)
}

export function connect(url: string, token: string): Server {
  const go = async (method: string, path: string, body?: unknown) => {
    try {
      return await fetch(url + path, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          'x-arbor-via': 'cli',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      })
    } catch (err) {
      throw new CliError(`cannot reach Arbor at ${url} (${(err as Error).message}): start it, or pass --url`)
    }
  }
  return {
    url,
    fetch: async (path) => {
      const res = await go('GET', path)
      if (!res.ok) throw refusal(res.status, await res.text(), url)
      return res
    },
    async call(method, path, body) {
      const res = await go(method, path, body)
      const text = await res.text()
      if (!res.ok) throw refusal(res.status, text, url)
      return JSON.parse(text)
    },
  }
}

function refusal(status: number, text: string, url: string): CliError {
  let said = text
  try {
    const body = JSON.parse(text)
    said = body.message ?? body.error ?? (Array.isArray(body.errors) ? body.errors.join('; ') : text)
  } catch {
    // not JSON: quote it as it came
  }
  if (status === 404 && /ADMIN_TOKEN is not set/.test(said)) return new CliError(`the server at ${url} has no ADMIN_TOKEN: ${said}`)
  if (status === 401) return new CliError(`the server at ${url} refused the token (401): check ADMIN_TOKEN or the API key`)
  return new CliError(`${status}: ${said}`)
}
