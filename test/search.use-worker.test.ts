import { expect, it } from 'bun:test'
import { UseEmbedder } from '../src/search/embedder/use'

// The sentence encoder runs in a worker thread so its forward passes never hold up requests;
// the worker must give exactly the vectors the model gives on the calling thread.
it('the worker thread and the calling thread embed a text to the same vector', async () => {
  const texts = ['Payers can settle invoices online', 'Renew the TLS certificate', '']
  const [inWorker, inThread] = await Promise.all([new UseEmbedder().embed(texts), new UseEmbedder({ inWorker: false }).embed(texts)])
  expect(inWorker).toHaveLength(3)
  for (let i = 0; i < texts.length; i++) {
    expect(inWorker[i]).toBeInstanceOf(Float32Array)
    expect(inWorker[i]!.length).toBe(512)
    let cos = 0
    for (let d = 0; d < 512; d++) cos += inWorker[i]![d]! * inThread[i]![d]!
    expect(cos).toBeCloseTo(1, 5)
  }
}, 60_000)
