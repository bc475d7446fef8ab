import type { Config } from '../config'
import { parse, URL_OPTION } from './args'
import { serverUrl } from './server-api'

/** How long the server has to answer: under the image's HEALTHCHECK --timeout (5 s). */
const TIMEOUT_MS = 4000

/**
 * `arbor healthcheck [--url URL]`: GET /healthz of the running server (http://127.0.0.1:$PORT by
 * default). Exit 0 when it answers 200, else 1 with one line saying why. It is the container
 * image's HEALTHCHECK, since the image has no curl or wget.
 */
export async function healthcheckCommand(config: Config, argv: string[]): Promise<number> {
  const { values } = parse(argv, URL_OPTION, { min: 0, max: 0 })
  const url = `${serverUrl(config, values.url)}/healthz`
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(TIMEOUT_MS) })
    await res.arrayBuffer()
    if (res.status === 200) return 0
    console.error(`arbor healthcheck: ${url} answered ${res.status}`)
  } catch (err) {
    console.error(`arbor healthcheck: no answer from ${url} (${(err as Error).message})`)
  }
  return 1
}
