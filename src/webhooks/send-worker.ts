// The delivery worker's module (sender.ts): runs each batch of attempts side by side and answers
// with their outcomes in the batch's order.
import { type SendJob, send } from './send'

declare const self: Worker

self.onmessage = async (event: MessageEvent<{ batch: number; jobs: SendJob[]; allowInsecure: boolean }>) => {
  const { batch, jobs, allowInsecure } = event.data
  const outcomes = await Promise.all(jobs.map((job) => send(job, allowInsecure)))
  self.postMessage({ batch, outcomes })
}
