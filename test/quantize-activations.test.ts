import { describe, expect, it } from 'bun:test'
import protobuf from 'protobufjs/minimal.js'
import { loadConfig } from '../src/config'
import { findMiniLm } from '../src/search/embedder/minilm'
import { quantizeActivations } from '../src/search/embedder/quantize-activations'

// src/search/embedder/quantize-activations.ts, checked with the real onnxruntime-node: a model
// built here field by field (Cast -> Mul -> MatMul, as the sentence model stores its weights),
// and the sentence model itself where model:fetch put it.

const { Writer } = protobuf
type W = protobuf.Writer
const msg = (build: (w: W) => void) => {
  const w = Writer.create()
  build(w)
  return w.finish()
}
const str = (w: W, no: number, s: string) => w.uint32((no << 3) | 2).string(s)
const sub = (w: W, no: number, bytes: Uint8Array) => w.uint32((no << 3) | 2).bytes(bytes)
const num = (w: W, no: number, n: number) => w.uint32(no << 3).int64(n)

const node = (op: string, inputs: string[], outputs: string[], attribute?: Uint8Array) =>
  msg((w) => {
    for (const i of inputs) str(w, 1, i)
    for (const o of outputs) str(w, 2, o)
    str(w, 3, `${op}-${outputs[0]}`)
    str(w, 4, op)
    if (attribute) sub(w, 5, attribute)
  })
const tensor = (name: string, dataType: number, dims: number[], raw: Uint8Array) =>
  msg((w) => {
    for (const d of dims) num(w, 1, d)
    num(w, 2, dataType)
    str(w, 8, name)
    sub(w, 9, raw)
  })
/** ValueInfoProto: a float tensor `name` of shape `dims` (TypeProto.tensor_type: elem_type, shape) */
const valueInfo = (name: string, dims: number[]) => {
  const shape = msg((s) => {
    for (const d of dims)
      sub(
        s,
        1,
        msg((dim) => num(dim, 1, d)),
      )
  })
  const tensorType = msg((tt) => sub(num(tt, 1, 1), 2, shape))
  return msg((w) =>
    sub(
      str(w, 1, name),
      2,
      msg((t) => sub(t, 1, tensorType)),
    ),
  )
}

/** Cast's attribute `to` = FLOAT (name, i, type INT) */
const castToFloat = () => msg((a) => num(num(str(a, 1, 'to'), 3, 1), 20, 2))
const WEIGHTS = Int8Array.from([12, -7, 100, -128, 3, 55, 0, 90, -33, 127, -64, 8]) // 4 x 3
const SCALES = Float32Array.from([0.01, 0.02, 0.005]) // one per column
/** y = a . (W * scale), with a field of its own in the model and in the graph that no schema here knows */
function castMulMatMul(): Uint8Array {
  const graph = msg((g) => {
    sub(g, 1, node('Cast', ['w_q'], ['w_f'], castToFloat()))
    sub(g, 1, node('Mul', ['w_f', 'scale'], ['w']))
    sub(g, 1, node('MatMul', ['a', 'w'], ['y']))
    str(g, 2, 'cast-mul-matmul')
    sub(g, 5, tensor('w_q', 3, [4, 3], new Uint8Array(WEIGHTS.buffer)))
    sub(g, 5, tensor('scale', 1, [1, 3], new Uint8Array(SCALES.buffer)))
    sub(g, 11, valueInfo('a', [1, 4]))
    sub(g, 12, valueInfo('y', [1, 3]))
    str(g, 98, 'graph field from a newer schema')
  })
  return msg((m) => {
    num(m, 1, 8) // ir_version
    sub(m, 7, graph)
    sub(
      m,
      8,
      msg((o) => num(str(o, 1, ''), 2, 17)),
    )
    str(m, 99, 'model field from a newer schema')
  })
}

const SESSION = { graphOptimizationLevel: 'all', intraOpNumThreads: 1 } as const
async function run(model: Uint8Array, a: number[]): Promise<number[]> {
  const ort = await import('onnxruntime-node')
  const session = await ort.InferenceSession.create(model, SESSION)
  const out = await session.run({ a: new ort.Tensor('float32', Float32Array.from(a), [1, a.length]) })
  return [...(out.y!.data as Float32Array)]
}

describe('quantizing a model’s activations (src/search/embedder/quantize-activations.ts)', () => {
  it('turns Cast -> Mul -> MatMul into one DynamicQuantizeMatMul that onnxruntime runs, to within 8-bit rounding', async () => {
    const original = castMulMatMul()
    const { model, rewritten } = quantizeActivations(original)
    expect(rewritten).toBe(1)
    const text = new TextDecoder().decode(model)
    expect(text).toContain('DynamicQuantizeMatMul')
    expect(text).toContain('com.microsoft')
    expect(text).not.toContain('Cast-w_f')
    // fields it does not know are kept as they were
    expect(text).toContain('model field from a newer schema')
    expect(text).toContain('graph field from a newer schema')

    const a = [0.3, -1.2, 2.5, 0.05]
    const exact = [0, 1, 2].map((c) => a.reduce((s, x, k) => s + x * WEIGHTS[k * 3 + c]! * SCALES[c]!, 0))
    const before = await run(original, a)
    const after = await run(model, a)
    for (const [c, y] of before.entries()) expect(y).toBeCloseTo(exact[c]!, 5)
    // 8-bit activations: within a few hundredths of the float answer at this scale
    for (const [c, y] of after.entries()) expect(Math.abs(y - exact[c]!)).toBeLessThan(0.03)
    expect(after).not.toEqual(before) // it did run the quantized product
  })

  it('leaves a model without the pattern as it was (the very bytes)', () => {
    const plain = msg((m) => {
      num(m, 1, 8)
      sub(
        m,
        7,
        msg((g) => {
          sub(g, 1, node('Relu', ['a'], ['y']))
          sub(g, 11, valueInfo('a', [1, 4]))
          sub(g, 12, valueInfo('y', [1, 4]))
        }),
      )
    })
    const { model, rewritten } = quantizeActivations(plain)
    expect(rewritten).toBe(0)
    expect(model).toBe(plain)
  })

  it('leaves a product alone when its scaled weights are read elsewhere too', () => {
    const graph = msg((g) => {
      sub(g, 1, node('Cast', ['w_q'], ['w_f'], castToFloat()))
      sub(g, 1, node('Mul', ['w_f', 'scale'], ['w']))
      sub(g, 1, node('MatMul', ['a', 'w'], ['y']))
      sub(g, 5, tensor('w_q', 3, [4, 3], new Uint8Array(WEIGHTS.buffer)))
      sub(g, 5, tensor('scale', 1, [1, 3], new Uint8Array(SCALES.buffer)))
      sub(g, 12, valueInfo('w', [4, 3])) // the scaled weights are an output of the graph
    })
    const model = msg((m) => sub(m, 7, graph))
    expect(quantizeActivations(model).rewritten).toBe(0)
  })

  const found = findMiniLm(loadConfig({}).embeddingsModelDir)
  it.skipIf(!found && !process.env.CI)('rewrites every weight product of the sentence model, which then embeds', async () => {
    const bytes = await Bun.file(found!.files.model).bytes()
    const { model, rewritten } = quantizeActivations(bytes)
    // six layers of six products each (query, key, value, attention output, two feed-forward)
    expect(rewritten).toBe(36)
    const ort = await import('onnxruntime-node')
    const session = await ort.InferenceSession.create(model, SESSION)
    const ids = BigInt64Array.from([101n, 7592n, 2088n, 102n])
    const feeds = {
      input_ids: new ort.Tensor('int64', ids, [1, 4]),
      attention_mask: new ort.Tensor('int64', BigInt64Array.from([1n, 1n, 1n, 1n]), [1, 4]),
      token_type_ids: new ort.Tensor('int64', new BigInt64Array(4), [1, 4]),
    }
    const out = Object.values(await session.run(feeds))[0]!
    expect(out.dims).toEqual([1, 4, 384])
    expect([...(out.data as Float32Array)].every(Number.isFinite)).toBe(true)
  })
})
