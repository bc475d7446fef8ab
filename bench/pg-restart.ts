// PostgreSQL restarted under writes (issue 45, item 2): the set of examples/scale-out (three
// replicas, HAProxy, Meilisearch when ../shared/tools has it), ten writers updating tasks through
// HAProxy for 90 s, `pg_ctl restart -m fast` at 15 s. Prints the writes answered per 5 s with
// their p50 and max, and each replica's arbor_replica_waits_total at 12, 40 and 80 s:
//
//   bun bench/pg-restart.ts
//
// Before this fix (src/revisions/replicas.ts giving up on a renewal or acknowledgement after 1 s, and
// a 5 s connect timeout), the writes took 4 s each for about 25 s after the restart: an
// acknowledgement queued during the restart hung for postgres.js's 30 s connect timeout, and
// every other replica's write waited out this one's renewal meanwhile.

import { mkdtempSync } from 'node:fs'
import { startStack } from '../examples/scale-out/stack'

const dir = mkdtempSync('/tmp/pgfault-')
const stack = await startStack({ dir, basePort: 31000, replicaEnv: { RATE_LIMIT_PER_MINUTE: '0', LOG_LEVEL: 'warn' } })
const KEY = stack.ownerKey!
const base = stack.apiUrl
const call = async (body: any) => {
  const r = await fetch(`${base}/mutate`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(20000),
  })
  return r.status
}
console.log(await call({ action: 'addProject', project: { name: 'load', id: 'load' } }))
for (let i = 0; i < 10; i++) await call({ action: 'add', projectId: 'load', node: { type: 'task', data: { label: `x${i}` } } })
const t0 = Date.now()
const END = 90_000
const buckets = new Map<number, number[]>()
const statuses = new Map<string, number>()
const metrics = async (label: string) => {
  for (const port of stack.ports.replicas) {
    const t = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()
    console.log(
      label,
      port,
      t
        .split('\n')
        .filter((l) => l.includes('replica_wait') && !l.startsWith('#'))
        .join(' | '),
    )
  }
}
setTimeout(() => void metrics('t=12'), 12_000)
setTimeout(() => void metrics('t=40'), 40_000)
setTimeout(() => void metrics('t=80'), 80_000)
setTimeout(async () => {
  const s = Date.now()
  await stack.restartPostgres()
  console.log('restart took', Date.now() - s, 'ms, at', (s - t0) / 1000)
}, 15_000)
await Promise.all(
  Array.from({ length: 10 }, async (_, w) => {
    let i = 0
    while (Date.now() - t0 < END) {
      const s = Date.now()
      let st = 0
      try {
        st = await call({ action: 'update', projectId: 'load', nodeId: `task-${w + 1}`, data: { description: `d${i++}` } })
      } catch {
        st = -1
      }
      statuses.set(String(st), (statuses.get(String(st)) ?? 0) + 1)
      const sec = Math.floor((s - t0) / 5000) * 5
      if (!buckets.has(sec)) buckets.set(sec, [])
      buckets.get(sec)!.push(st === 200 ? Date.now() - s : -1)
      if (st !== 200) await Bun.sleep(500)
    }
  }),
)
for (const [sec, xs] of [...buckets].sort((a, b) => a[0] - b[0])) {
  const ok = xs.filter((x) => x >= 0).sort((a, b) => a - b)
  console.log(sec, 'n', xs.length, 'ok', ok.length, 'p50', ok[Math.floor(ok.length / 2)], 'max', ok[ok.length - 1])
}
console.log(JSON.stringify([...statuses]), 'dir', dir)
await stack.stop()
