// The delivery worker's module (sender.ts): runs each batch of attempts side by side and answers
// with their outcomes in the batch's order.
import { dlopen, FFIType } from 'bun:ffi'
import { type StoredJob, send, withBodies } from './send'

declare const self: Worker

/**
 * This thread runs at a lower CPU priority (nice 10) than the one serving requests: on a busy
 * machine a delivery may wait a little, a user's write does not wait for deliveries. Linux
 * only (a thread's own priority via setpriority on its thread id); elsewhere it runs as is.
 */
function yieldToRequests(): void {
  if (process.platform !== 'linux') return
  try {
    const libc = dlopen('libc.so.6', {
      gettid: { args: [], returns: FFIType.i32 },
      setpriority: { args: [FFIType.i32, FFIType.u32, FFIType.i32], returns: FFIType.i32 },
    })
    libc.symbols.setpriority(0, libc.symbols.gettid(), 10)
    libc.close()
  } catch {
    // no glibc (musl, or a sandbox without dlopen): same priority as the rest
  }
}
yieldToRequests()

self.onmessage = async (event: MessageEvent<{ batch: number; jobs: StoredJob[]; allowInsecure: boolean }>) => {
  const { batch, jobs, allowInsecure } = event.data
  const outcomes = await Promise.all(withBodies(jobs).map((job) => send(job, allowInsecure)))
  self.postMessage({ batch, outcomes })
}
