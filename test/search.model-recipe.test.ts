// Issue 57: a model directory says which model it holds (arbor-model.json), and each known model
// is run its own way: its pinned files, its pooling, and a query prefix for queries only.
import { describe, expect, it } from 'bun:test'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../src/config'
import { checkMiniLm, findMiniLm, KNOWN_MODELS, MiniLmModel, type ModelRecipe } from '../src/search/embedder/minilm'
import { chooseEmbedder, EmbedQueue } from '../src/search/embedder/runtime'
import type { Embedder } from '../src/search/embedder/types'

function dirWith(manifest: object | null, files: Record<string, string> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'arbor-model-'))
  mkdirSync(dir, { recursive: true })
  if (manifest) writeFileSync(join(dir, 'arbor-model.json'), JSON.stringify(manifest))
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text)
  return dir
}

const dot = (a: Float32Array, b: Float32Array) => a.reduce((s, v, i) => s + v * b[i]!, 0)

describe('model directory', () => {
  it('a directory naming another id is checked as all-MiniLM-L6-v2, as before', () => {
    const dir = dirWith({ id: 'some-other-model', source: 'x', sha256: 'x' }, { 'model.onnx': 'x', 'tokenizer.json': '{}' })
    try {
      expect(checkMiniLm(dir)).toEqual({ missing: ['tokenizer_config.json'] })
      writeFileSync(join(dir, 'tokenizer_config.json'), '{}')
      expect(checkMiniLm(dir)).toEqual({ mismatch: join(dir, 'model.onnx') })
      const choice = chooseEmbedder({ ...loadConfig({}), embeddingsModelDir: dir, embeddingsUrl: undefined })
      expect(choice.fallback).toContain('is not the pinned file')
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('bge-small-en-v1.5 needs its model and tokenizer only, each with its pinned SHA-256', () => {
    const dir = dirWith({ id: 'bge-small-en-v1.5-q-v1', source: 'x', sha256: 'x' })
    try {
      expect(checkMiniLm(dir)).toEqual({ missing: ['model.onnx', 'tokenizer.json'] })
      writeFileSync(join(dir, 'model.onnx'), 'not the model')
      writeFileSync(join(dir, 'tokenizer.json'), '{}')
      expect(checkMiniLm(dir)).toEqual({ mismatch: join(dir, 'model.onnx') })
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('every candidate comes from a jar, with a recipe of its own', () => {
    expect(KNOWN_MODELS['bge-small-en-v1.5-q-v1']!.recipe).toMatchObject({
      pooling: 'cls',
      queryPrefix: expect.stringContaining('searching'),
    })
    expect(KNOWN_MODELS['e5-small-v2-q-v1']!.recipe).toMatchObject({ pooling: 'mean', queryPrefix: 'query: ', passagePrefix: 'passage: ' })
    for (const [id, m] of Object.entries(KNOWN_MODELS))
      if (id !== 'minilm-l6-v2-int8-v1') expect(m.jar?.artifact).toMatch(/^dev\.langchain4j:/)
  })
})

describe('queries and passages', () => {
  it('EmbedQueue.query asks for a query vector where the embedder makes one, embed for documents', async () => {
    const calls: string[] = []
    const fake: Embedder = {
      id: 'fake',
      dims: 1,
      embed: async (texts) => {
        calls.push(...texts.map((t) => `passage:${t}`))
        return texts.map(() => Float32Array.of(1))
      },
      embedQueries: async (texts) => {
        calls.push(...texts.map((t) => `query:${t}`))
        return texts.map(() => Float32Array.of(1))
      },
    }
    const queue = new EmbedQueue(fake)
    await queue.query('find me')
    await queue.query('find me') // cached
    await queue.embed(['a node'])
    expect(calls).toEqual(['query:find me', 'passage:a node'])
  })

  const found = findMiniLm(loadConfig({}).embeddingsModelDir)
  it.skipIf(!found && !process.env.CI)(
    "pooling and the query prefix change the vectors as the recipe says (on MiniLM's own files)",
    async () => {
      const plain: ModelRecipe = { pooling: 'mean', queryPrefix: '', passagePrefix: '', quantizeActivations: true }
      const mean = await MiniLmModel.load(found!.files, undefined, plain)
      const cls = await MiniLmModel.load(found!.files, undefined, { ...plain, pooling: 'cls' })
      const prefixed = await MiniLmModel.load(found!.files, undefined, { ...plain, queryPrefix: 'search query: ' })
      const text = 'water the tomatoes'
      const [m] = await mean.embed([text], true)
      const [c] = await cls.embed([text], true)
      const [p] = await prefixed.embed([text], true)
      const [d] = await prefixed.embed([text]) // a passage: no prefix
      expect(dot(m!, m!)).toBeCloseTo(1, 4)
      expect(dot(c!, c!)).toBeCloseTo(1, 4)
      expect(dot(m!, c!)).toBeLessThan(0.99) // the [CLS] vector is not the mean
      expect(dot(m!, p!)).toBeLessThan(0.99) // the prefix reached the model
      expect(dot(m!, d!)).toBeCloseTo(1, 5) // and only for queries
    },
  )
})
