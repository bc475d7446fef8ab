// The CPU a label update costs the whole process (issue 51, 3): the app in this process
// (bench/lib/app.ts, PGlite), eight writers each updating its own goal's label over HTTP, the
// process's CPU time (the server, its database and the client together) per write, three times
// 2,000 writes after 2,000 untimed. To compare two commits, copy this file into a checkout of the
// other one and run the two in turns:
//
//   bun bench/write-cpu.ts [label]

import { startBenchServer } from './lib/app'
import { mutate } from './lib/sql-cpu'

const WRITERS = 8
const WRITES = 2000

const s = await startBenchServer()
try {
  const call = mutate(s)
  await call({ action: 'addProject', project: { id: 'bench', name: 'bench' } })
  const goals: string[] = []
  for (let i = 0; i < WRITERS; i++)
    goals.push((await call({ action: 'add', projectId: 'bench', node: { type: 'goal', data: { label: `g${i}` } } })).node!.id)
  let k = 0
  const writes = async (n: number) => {
    let left = n
    await Promise.all(
      goals.map(async (nodeId) => {
        while (left-- > 0) await call({ action: 'update', projectId: 'bench', nodeId, data: { label: `u${++k}` } })
      }),
    )
  }
  await writes(WRITES) // untimed: the code compiled, the statements prepared
  const ms: string[] = []
  for (let r = 0; r < 3; r++) {
    const cpu = process.cpuUsage()
    await writes(WRITES)
    const d = process.cpuUsage(cpu)
    ms.push(((d.user + d.system) / 1000 / WRITES).toFixed(3))
  }
  console.log(`${process.argv[2] ?? 'this checkout'}: CPU ms a write, three rounds of ${WRITES}: ${ms.join(' ')}`)
} finally {
  await s.close()
}
