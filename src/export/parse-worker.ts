// The bundle reader's worker (parse.ts, parseBundleOffThread): a 15,000-file bundle's YAML takes
// seconds of CPU, which on the thread that serves requests every other tenant would wait for.
import { BundleError, parseBundle } from './parse'

declare const self: Worker

self.onmessage = (event: MessageEvent<Record<string, string>>) => {
  try {
    self.postMessage({ bundle: parseBundle(event.data) })
  } catch (err) {
    self.postMessage(err instanceof BundleError ? { refused: err.message } : { failed: String((err as Error)?.stack ?? err) })
  }
}
