// The worker side of MiniLmEmbedder: loads the model once, then answers each batch in order.
import { type MiniLmFiles, MiniLmModel } from './minilm'

declare const self: Worker

let model: Promise<MiniLmModel> | undefined

self.onmessage = async (event: MessageEvent<{ id: number; texts: string[]; files: MiniLmFiles }>) => {
  const { id, texts, files } = event.data
  try {
    model ??= MiniLmModel.load(files)
    const vectors = await (await model).embed(texts)
    self.postMessage(
      { id, vectors },
      vectors.map((v) => v.buffer as ArrayBuffer),
    )
  } catch (err) {
    model = undefined // a failed load is tried again on the next batch
    self.postMessage({ id, error: String((err as Error)?.message ?? err) })
  }
}
