// The migrations, in order. Bun imports each file as text, so they travel inside a compiled binary.
import m0001 from './0001-accounts-projects.sql' with { type: 'text' }
import m0002 from './0002-tree.sql' with { type: 'text' }

export const migrations: { name: string; sql: string }[] = [
  { name: '0001-accounts-projects', sql: m0001 },
  { name: '0002-tree', sql: m0002 },
]
