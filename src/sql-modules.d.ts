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
