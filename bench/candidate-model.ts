// Puts one of issue 57's candidate models (src/search/embedder/minilm.ts: KNOWN_MODELS) into a
// model directory, from the langchain4j jar that carries it, so that `npm run eval:search` or a
// server can run it: EMBEDDINGS_MODEL_DIR=<dir>. Not the default model (docs/search.md says why).
//
//   bun bench/candidate-model.ts <id> <dir>      e.g. bge-small-en-v1.5-q-v1 /tmp/models/bge
//
// The jar comes through Maven's ordinary client (`mvn dependency:copy`); Java's jars are zip
// files, which Python's zipfile opens. Every file is checked against its pinned SHA-256 before
// it is moved in.

import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { KNOWN_MODELS, MINILM_FILE_NAMES, MINILM_MANIFEST } from '../src/search/embedder/minilm'

const [id, dir] = process.argv.slice(2)
const known = id ? KNOWN_MODELS[id] : undefined
if (!known?.jar || !dir) {
  const ids = Object.entries(KNOWN_MODELS)
    .filter(([, m]) => m.jar)
    .map(([k]) => k)
  console.error(`usage: bun bench/candidate-model.ts <${ids.join('|')}> <dir>`)
  process.exit(2)
}

function run(cmd: string[]): void {
  const res = Bun.spawnSync(cmd, { stdout: 'pipe', stderr: 'pipe', timeout: 600_000 })
  if (res.exitCode !== 0) {
    console.error(`${cmd.join(' ')} failed:\n${res.stdout}${res.stderr}`)
    process.exit(1)
  }
}

const work = mkdtempSync(join(tmpdir(), 'arbor-candidate-'))
try {
  run(['mvn', '-q', '-B', 'dependency:copy', `-Dartifact=${known.jar.artifact}`, `-DoutputDirectory=${work}`])
  const jarName = `${known.jar.artifact.split(':').slice(1).join('-')}.jar`
  run(['python3', '-m', 'zipfile', '-e', join(work, jarName), join(work, 'unpacked')])
  mkdirSync(dir, { recursive: true })
  const from = { model: known.jar.model, tokenizer: known.jar.tokenizer } as const
  for (const key of ['model', 'tokenizer'] as const) {
    const path = join(work, 'unpacked', from[key])
    const digest = new Bun.CryptoHasher('sha256').update(await Bun.file(path).bytes()).digest('hex')
    if (digest !== known.sha256[key]) {
      console.error(`${from[key]} has SHA-256 ${digest}, pinned ${known.sha256[key]}`)
      process.exit(1)
    }
    renameSync(path, join(dir, MINILM_FILE_NAMES[key]))
  }
  const manifest = { id, source: `Maven ${known.jar.artifact}`, sha256: known.sha256.model }
  writeFileSync(join(dir, MINILM_MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`)
  console.log(`${dir} now holds ${id} from ${manifest.source}`)
} finally {
  rmSync(work, { recursive: true, force: true })
}
