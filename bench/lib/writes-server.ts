import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { serverEnv, until } from './harness'
import { freePort } from './spawn'

/**
 * The real server (`bun [bunArgs] src/main.ts` of `checkout`) as the write benchmarks start it:
 * on the database `env` names, no model (its files looked for under `tmp`), no request log; its
 * stderr passed through. Resolves once it answers /healthz, with `call`: a POST /mutate of the
 * owner that throws unless it answered 200, and `url`, its base.
 */
export async function startWritesServer(checkout: string, env: Record<string, string | undefined>, tmp: string, bunArgs: string[] = []) {
  const port = freePort()
  let out = ''
  const server: Subprocess<'ignore', 'pipe', 'inherit'> = Bun.spawn([process.execPath, ...bunArgs, 'src/main.ts'], {
    cwd: checkout,
    env: serverEnv({ ...env, PORT: String(port), LOG_LEVEL: 'warn', EMBEDDINGS_MODEL_DIR: join(tmp, 'no-model') }),
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'inherit',
  })
  void (async () => {
    for await (const chunk of server.stdout) out += new TextDecoder().decode(chunk)
  })()
  try {
    const key = await until(() => /Arbor API key for owner: (arb_[0-9A-Za-z]+)/.exec(out)?.[1], 'owner key', 120_000)
    const base = `http://127.0.0.1:${port}`
    await until(async () => ((await fetch(`${base}/healthz`).catch(() => null))?.ok ? true : undefined), 'healthz')
    const call = async (body: unknown) => {
      const res = await fetch(`${base}/api/v1/mutate`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
      const json = (await res.json()) as Record<string, any>
      if (res.status !== 200) throw new Error(`mutate: ${res.status} ${JSON.stringify(json).slice(0, 300)}`)
      return json
    }
    return { server, call, url: base }
  } catch (err) {
    server.kill('SIGKILL')
    await server.exited
    throw err
  }
}
