/**
 * Where a JSON text breaks, and how, for the 400 of a body that does not parse (issue 55): Bun's
 * JSON.parse says neither ("JSON Parse error: Expected '}'"). Run only once JSON.parse has failed;
 * a scan of RFC 8259's grammar that stops at the first character it cannot take.
 */
export interface JsonSyntaxError {
  /** 0-based index in the text (UTF-16 code units) */
  offset: number
  /** 1-based */
  line: number
  /** 1-based */
  column: number
  /** what was expected, and what came instead */
  problem: string
}

const WS = new Set([' ', '\t', '\n', '\r'])

/** One character (or the end) as a message shows it. */
function shown(text: string, i: number): string {
  if (i >= text.length) return 'the end of the body'
  const c = text[i] as string
  if (c === '\n') return 'a line break'
  if (c < ' ') return `the control character U+${c.charCodeAt(0).toString(16).padStart(4, '0').toUpperCase()}`
  if (/[A-Za-z]/.test(c)) return `'${/^[A-Za-z_]+/.exec(text.slice(i, i + 20))?.[0] ?? c}'`
  return `'${c}'`
}

class Broken {
  constructor(
    readonly offset: number,
    readonly problem: string,
  ) {}
}

/** The first syntax error of `text`, or null when it is one JSON value. */
export function findJsonSyntaxError(text: string): JsonSyntaxError | null {
  let i = 0
  const fail = (expected: string, at = i): never => {
    throw new Broken(at, `expected ${expected}, found ${shown(text, at)}`)
  }
  const skip = () => {
    while (i < text.length && WS.has(text[i] as string)) i++
  }
  const literal = (word: string) => {
    if (text.startsWith(word, i)) i += word.length
    else fail('a value (an object, array, string, number, true, false or null)')
  }
  const string = () => {
    i++ // the opening quote
    for (;;) {
      if (i >= text.length) fail('the closing quote of a string')
      const c = text.charCodeAt(i)
      if (c === 0x22) {
        i++
        return
      }
      if (c < 0x20) fail('a character of a string (a control character must be escaped, e.g. \\n)')
      if (c === 0x5c) {
        const e = text[i + 1]
        if (e === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) fail('four hex digits after \\u', i + 2)
          i += 6
        } else if (e !== undefined && '"\\/bfnrt'.includes(e)) i += 2
        else fail('an escape (\\" \\\\ \\/ \\b \\f \\n \\r \\t or \\uXXXX)', i + 1)
      } else i++
    }
  }
  const number = () => {
    const m = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400))
    if (!m) fail('a value (an object, array, string, number, true, false or null)')
    i += (m as RegExpExecArray)[0].length
  }
  const value = (): void => {
    skip()
    const c = text[i]
    if (c === '{') {
      i++
      skip()
      if (text[i] === '}') {
        i++
        return
      }
      for (;;) {
        skip()
        if (text[i] !== '"')
          fail(text[i] === '}' ? 'a property name in double quotes (no comma before })' : 'a property name in double quotes')
        string()
        skip()
        if (text[i] !== ':') fail("':' after a property name")
        i++
        value()
        skip()
        if (text[i] === ',') i++
        else if (text[i] === '}') {
          i++
          return
        } else fail("',' or '}' after a property value")
      }
    }
    if (c === '[') {
      i++
      skip()
      if (text[i] === ']') {
        i++
        return
      }
      for (;;) {
        skip()
        if (text[i] === ']') fail('a value (no comma before ])')
        value()
        skip()
        if (text[i] === ',') i++
        else if (text[i] === ']') {
          i++
          return
        } else fail("',' or ']' after an array element")
      }
    }
    if (c === '"') string()
    else if (c === 't') literal('true')
    else if (c === 'f') literal('false')
    else if (c === 'n') literal('null')
    else number()
  }
  try {
    value()
    skip()
    if (i < text.length) fail('nothing after the JSON value')
    return null
  } catch (err) {
    if (!(err instanceof Broken)) throw err
    const before = text.slice(0, err.offset)
    const line = before.split('\n').length
    const column = err.offset - (before.lastIndexOf('\n') + 1) + 1
    return { offset: err.offset, line, column, problem: err.problem }
  }
}

/**
 * A JSON body's value, or the 400's message when it is not JSON: where (line, column, offset)
 * and what. The one parse of a request's JSON body: the wrapper hands the value on to the router
 * (src/http/server.ts `withBody`).
 */
export function parseJsonBody(text: string): { value: unknown } | { refusal: string } {
  try {
    return { value: JSON.parse(text) }
  } catch {
    const found = findJsonSyntaxError(text)
    // the scan and JSON.parse disagree only on what the scan does not know (e.g. nesting too deep)
    if (!found) return { refusal: 'Request body is not valid JSON' }
    return {
      refusal: `Request body is not valid JSON: at line ${found.line}, column ${found.column} (offset ${found.offset}), ${found.problem}`,
    }
  }
}
