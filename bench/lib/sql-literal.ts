/** A value as an SQL literal, for `explain execute` of a prepared statement: null, text or a number, or an array of them. */
export const sqlLiteral = (v: unknown): string =>
  v === null
    ? 'null'
    : Array.isArray(v)
      ? `array[${v.map(sqlLiteral).join(', ')}]::${typeof v[0] === 'number' ? 'bigint' : 'text'}[]`
      : typeof v === 'number'
        ? String(v)
        : `'${String(v).replace(/'/g, "''")}'`
