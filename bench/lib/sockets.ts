// Counts of the process's socket writes (each a system call) and of the reads that delivered data,
// postgres.js's to PostgreSQL among them: bench/stmt-cost.ts and bench/write-edge.ts read them
// before and after what they time. Counting starts at the first call of `countSockets`.
import { Socket } from 'node:net'

export interface SocketCounts {
  writes: number
  reads: number
}

let counts: SocketCounts | undefined

/** The process's running counts (the same object on every call): read them before and after. */
export function countSockets(): SocketCounts {
  if (counts) return counts
  const running: SocketCounts = { writes: 0, reads: 0 }
  counts = running
  const write = Socket.prototype.write
  Socket.prototype.write = function (this: Socket, ...a: Parameters<typeof write>) {
    running.writes++
    return write.apply(this, a)
  } as typeof write
  const emit = Socket.prototype.emit
  Socket.prototype.emit = function (this: Socket, ev: string, ...a: unknown[]) {
    if (ev === 'data') running.reads++
    return emit.call(this, ev, ...a)
  } as typeof emit
  return running
}
