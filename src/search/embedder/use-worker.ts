// The worker side of UseEmbedder: runs Universal Sentence Encoder lite off the main thread, so
// a forward pass (15–25 ms a text) never holds up HTTP requests.
import { UseEmbedder } from './use.ts'

declare const self: Worker

const embedder = new UseEmbedder({ inWorker: false })

self.onmessage = async (event: MessageEvent<{ id: number; texts: string[] }>) => {
  const { id, texts } = event.data
  try {
    const vectors = await embedder.embed(texts)
    self.postMessage(
      { id, vectors },
      vectors.map((v) => v.buffer as ArrayBuffer),
    )
  } catch (err) {
    self.postMessage({ id, error: String((err as Error)?.message ?? err) })
  }
}
