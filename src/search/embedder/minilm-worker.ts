// The other side of MiniLmEmbedder: loads the model once, then answers each batch in order.
// From a source checkout it runs as a child process (IPC messages); in the single executable, as
// a worker thread.
import { type MiniLmFiles, MiniLmModel } from './minilm'

declare const self: Worker

type Job = { id: number; texts: string[]; files: MiniLmFiles }
type Reply = { id: number; vectors?: Float32Array[]; error?: string }

let model: Promise<MiniLmModel> | undefined

async function answer({ id, texts, files }: Job): Promise<Reply> {
  try {
    model ??= MiniLmModel.load(files)
    return { id, vectors: await (await model).embed(texts) }
  } catch (err) {
    model = undefined // a failed load is tried again on the next batch
    return { id, error: String((err as Error)?.message ?? err) }
  }
}

if (Bun.isMainThread) {
  // a child process: it ends with its parent's channel, however the parent ended
  process.on('message', async (job: Job) => process.send!(await answer(job)))
  process.on('disconnect', () => process.exit(0))
} else {
  self.onmessage = async (event: MessageEvent<Job>) => {
    const reply = await answer(event.data)
    self.postMessage(
      reply,
      (reply.vectors ?? []).map((v) => v.buffer as ArrayBuffer),
    )
  }
}
