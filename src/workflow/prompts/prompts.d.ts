// The prompt templates are markdown files imported as text, so they travel inside a compiled binary.
declare module '*.md' {
  const text: string
  export default text
}
