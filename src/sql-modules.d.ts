// Bun imports `.sql` files as text (`with { type: 'text' }`), so the SQL travels inside a compiled binary.
declare module '*.sql' {
  const text: string
  export default text
}
