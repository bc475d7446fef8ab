import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import { deflateSync, inflateSync } from 'node:zlib'
import type { Deps } from '../deps'
import { RefusalError } from '../errors'
import { MAX_HISTORY, type RunState, STATE_LIFETIME_MS, STATE_VERSION } from './model'
import { secret } from './queries'

/**
 * The opaque `state` of a workflow run: `wf1.<payload>.<mac>`, where payload is the run as
 * deflated JSON in base64url and mac the HMAC-SHA256 of `wf1.<payload>` under a server secret
 * kept in the database (one per installation, shared by replicas). The MAC is compared as
 * text, so no two spellings of one state verify; nothing is inflated before the MAC matches.
 * The run names its project, user and expiry, which `open` checks against the request.
 */
const PREFIX = `wf${STATE_VERSION}.`
/** far above any state we issue (100 turns of clipped history); a longer one is refused unread */
export const MAX_STATE_CHARS = 400_000

export interface StateCodec {
  seal(run: RunState): Promise<string>
  open(token: unknown, expect: { projectId: string; userId: string }): Promise<RunState>
}

const badState = (message: string) =>
  new RefusalError(400, message, { _meta: { _tip: 'Pass back the state of the latest response verbatim, or start the flow again.' } })

export function createStateCodec(deps: Deps): StateCodec {
  let key: Promise<Buffer> | undefined
  const getKey = () => {
    key ??= secret(deps.db, 'workflow-state', () => randomBytes(32).toString('base64url'))
      .then((v) => Buffer.from(v, 'base64url'))
      .catch((err) => {
        key = undefined // a database hiccup must not poison every later run
        throw err
      })
    return key
  }
  const mac = async (text: string) =>
    createHmac('sha256', await getKey())
      .update(text)
      .digest('base64url')

  return {
    async seal(run) {
      const trimmed: RunState = { ...run, history: run.history.slice(-MAX_HISTORY) }
      const body = PREFIX + deflateSync(Buffer.from(JSON.stringify(trimmed))).toString('base64url')
      return `${body}.${await mac(body)}`
    },
    async open(token, expect) {
      if (typeof token !== 'string' || token === '') throw badState('advance requires state: the opaque string of the previous response')
      if (token.length > MAX_STATE_CHARS) throw badState('state is not one this server issued (too long)')
      if (!token.startsWith(PREFIX))
        throw badState(`state is not one this server issued, or is of an older version (expected ${PREFIX.slice(0, -1)})`)
      const dot = token.lastIndexOf('.')
      const body = token.slice(0, dot)
      const given = Buffer.from(token.slice(dot + 1))
      const wanted = Buffer.from(await mac(body))
      if (dot < PREFIX.length || given.length !== wanted.length || !timingSafeEqual(given, wanted))
        throw badState('state was altered or was not issued by this server')
      let run: RunState
      try {
        run = JSON.parse(inflateSync(Buffer.from(body.slice(PREFIX.length), 'base64url')).toString())
      } catch {
        throw badState('state could not be read')
      }
      if (run.v !== STATE_VERSION) throw badState('state is of another version; start the flow again')
      if (run.projectId !== expect.projectId) throw badState(`state belongs to another project than ${expect.projectId}`)
      if (run.userId !== expect.userId) throw badState('state belongs to another user')
      if (deps.now().getTime() > run.expiresAt)
        throw new RefusalError(400, `state expired at ${new Date(run.expiresAt).toISOString()}; start the flow again`, {
          _meta: { _tip: `A state is valid for ${STATE_LIFETIME_MS / 3_600_000} hours after it was issued.` },
        })
      return run
    },
  }
}
