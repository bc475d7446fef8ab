/**
 * The lines of a backup as bytes arrive: split at "\n" (0x0A) only. JSON leaves U+2028, U+2029
 * and U+0085 unescaped inside strings, and a reader that also ends lines there (node:readline
 * does) cuts a row in two; the backup writes them escaped (escapeLineBreaks), and this reader
 * does not split at them either, so an older backup that holds them raw still restores.
 */

/** A backup line that cannot be read: one line for the operator, naming the line. */
export class LineError extends Error {}

/**
 * No row the API writes comes near this: it keeps each text field to 20,000 characters
 * (LIMITS.textLength), some hundreds of kilobytes per row once escaped. A longer line is refused
 * before it is held whole in memory; a backup never writes one (src/backup/service.ts).
 */
export const MAX_LINE_BYTES = 64 * 1024 * 1024

const NEWLINE = 0x0a

/** The lines of `chunks`, each decoded as UTF-8 (strictly), without its "\n". */
export async function* splitLines(chunks: AsyncIterable<Uint8Array>, maxBytes = MAX_LINE_BYTES): AsyncGenerator<string> {
  const decoder = new TextDecoder('utf-8', { fatal: true })
  let parts: Uint8Array[] = []
  let size = 0
  let n = 1
  const add = (piece: Uint8Array) => {
    size += piece.length
    if (size > maxBytes)
      throw new LineError(`line ${n}: longer than ${maxBytes / 1024 / 1024} MiB, which no row of an Arbor backup is: the file was altered`)
    if (piece.length) parts.push(piece)
  }
  const take = () => {
    const bytes = parts.length === 1 ? parts[0]! : Buffer.concat(parts)
    parts = []
    size = 0
    try {
      return decoder.decode(bytes)
    } catch {
      throw new LineError(`line ${n}: not UTF-8 text: the file was altered or is not an Arbor backup`)
    }
  }
  for await (const chunk of chunks) {
    let start = 0
    for (let i = chunk.indexOf(NEWLINE); i !== -1; i = chunk.indexOf(NEWLINE, start)) {
      add(chunk.subarray(start, i))
      yield take()
      n++
      start = i + 1
    }
    // the tail waits for the next chunk: a copy, as a stream may reuse its buffer
    if (start < chunk.length) add(chunk.slice(start))
  }
  if (size > 0) yield take()
}

/**
 * JSON text with U+0085, U+2028 and U+2029 written as \u escapes (only strings can hold them, so
 * the meaning is the same). Three replaceAll of a literal rather than one regular expression with
 * a function called per match: a 40 MB text of separators (13 million) took 19 s that way, 3.8 s
 * this way (bun 1.4.5).
 */
export const escapeLineBreaks = (json: string) =>
  json.replaceAll('\u2028', '\\u2028').replaceAll('\u2029', '\\u2029').replaceAll('\u0085', '\\u0085')
