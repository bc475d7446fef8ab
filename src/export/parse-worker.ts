// The bundle reader's worker (parse.ts, readBundleOffThread): a 15,000-file bundle's YAML takes
// seconds of CPU, which on the thread that serves requests every other tenant would wait for.
// The files come as one JSON text and the entries go back in blocks of JSON text: copying
// 15,000 objects between threads took the serving thread half a second.
import { importBlocks } from './entries'
import { BundleError, parseBundle } from './parse'

declare const self: Worker

self.onmessage = (event: MessageEvent<string>) => {
  try {
    const { name, nodes } = parseBundle(JSON.parse(event.data))
    self.postMessage({ bundle: { name, nodes: nodes.length, ...importBlocks(nodes) } })
  } catch (err) {
    self.postMessage(err instanceof BundleError ? { refused: err.message } : { failed: String((err as Error)?.stack ?? err) })
  }
}
