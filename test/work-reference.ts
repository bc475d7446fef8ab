// The readiness rule (docs/agents.md) the whole project's way, for tests that hold the work
// state (work_items) to it: test/work.state.test.ts and test/work.deferred.test.ts.
export type N = { id: string; type: string; parentId: string | null; data: Record<string, any> }
export type It = { name: string; status: string; system: boolean }

/** The rule the whole project's way (what src/work did before the work state), in GET /ready's order. */
export function reference(nodes: N[], iterations: It[]) {
  const byId = new Map(nodes.map((n) => [n.id, n]))
  const isWork = (n: N) => n.type === 'job' || (n.type === 'task' && n.data.kind === 'do-it')
  const jobs = (id: string) => nodes.filter((n) => n.type === 'job' && n.parentId === id)
  const clear = (id: string) => {
    const a = byId.get(id)
    if (a?.type !== 'approach') return true
    if (a.data.approachStatus === 'resolved' || a.data.approachStatus === 'retired') return true
    const js = jobs(id)
    return js.length > 0 && js.every((j) => j.data.status === 'done')
  }
  const goalOf = (n: N) => {
    let at: N | undefined = n
    while (at && at.type !== 'goal') at = at.parentId ? byId.get(at.parentId) : undefined
    return at
  }
  const state = (n: N) => {
    if (n.data.status === 'done') return 'done'
    if (n.type === 'job') {
      const a = n.parentId ? byId.get(n.parentId) : undefined
      if (a?.data.approachStatus === 'retired' || a?.data.approachStatus === 'resolved') return 'blocked'
      const list: unknown = a?.data.blockedBy
      if (Array.isArray(list) && list.some((id) => typeof id === 'string' && !clear(id))) return 'blocked'
      if (goalOf(n)?.data.goalStatus === 'done') return 'blocked'
    }
    return 'ready'
  }
  const current = iterations.find((i) => i.status === 'active' && !i.system)
  const rank = new Map<string, number>()
  if (current) rank.set(current.name, 0)
  let next = 1
  for (const i of iterations) if (i.status === 'active' && !i.system && i !== current) rank.set(i.name, next++)
  for (const i of iterations) if (i.system) rank.set(i.name, iterations.length + 1)
  const key = (n: N, k: number) => [
    n.type === 'task' && n.data.urgent === true ? 0 : 1,
    (n.data.iteration === undefined ? undefined : rank.get(n.data.iteration)) ?? iterations.length + 2,
    n.type === 'job' && goalOf(n)?.data.goalStatus === 'focus' ? 0 : 1,
    k,
  ]
  const work = nodes.flatMap((n, k) => (isWork(n) ? [{ n, key: key(n, k), state: state(n) }] : []))
  work.sort((a, b) => {
    for (let i = 0; i < a.key.length; i++) if (a.key[i] !== b.key[i]) return a.key[i]! - b.key[i]!
    return 0
  })
  return {
    ready: work.filter((w) => w.state === 'ready').map((w) => w.n.id),
    blocked: work.filter((w) => w.state === 'blocked').length,
    states: new Map(work.map((w) => [w.n.id, w.state])),
  }
}

/** A small deterministic random source, so a failure can be replayed. */
export function random(seed: number) {
  let s = seed
  const next = () => (s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32
  return { next, pick: <T>(xs: T[]) => xs[Math.floor(next() * xs.length)]! }
}
