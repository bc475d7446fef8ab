// English text normalisation shared by the keyword index and the word-vector
// embedder: lower-case word tokens, a stopword list and a light stemmer.
// Pure functions, no dependencies.

// Words that carry no topic. Question words and auxiliaries matter here
// because users type questions ("where do we track churn?").
const STOPWORD_LIST =
  "a about above after again against all also am an and any are aren't as at be because been before being below " +
  "between both but by can can't cannot could couldn't did didn't do does doesn't doing don't down during each " +
  "either else etc ever every few for from further get gets got had hadn't has hasn't have haven't having he her " +
  "here hers herself him himself his how i if in into is isn't it it's its itself just let let's may me might " +
  "more most much must mustn't my myself no nor not now of off on once one only or other ought our ours " +
  "ourselves out over own per same shall she should shouldn't so some such than that that's the their theirs " +
  "them themselves then there there's these they this those through to too under until up upon us very via " +
  "was wasn't we were weren't what what's when where which while who whom whose why will with within without " +
  "won't would wouldn't yet you your yours yourself yourselves anything something everything nothing " +
  'someone anyone everyone thing things way ways really actually'

export const STOPWORDS: ReadonlySet<string> = new Set(STOPWORD_LIST.split(' '))

// Letters and digits, keeping inner apostrophes ("don't") and dots inside
// numbers ("0.01"); hyphens and slashes split words ("pay-by-link" -> pay by link).
const WORD_RE = /[\p{L}\p{N}]+(?:['’.][\p{L}\p{N}]+)*/gu

/** Lower-cased word tokens in order, stopwords included. */
export function words(text: string): string[] {
  const out: string[] = []
  for (const m of text.toLowerCase().matchAll(WORD_RE)) {
    out.push(m[0].replace(/’/g, "'"))
  }
  return out
}

/** Strip a possessive "'s" and other apostrophe tails ("customer's" -> customer). */
function dropPossessive(w: string): string {
  const i = w.indexOf("'")
  if (i < 0) return w
  const tail = w.slice(i + 1)
  return tail === 's' || tail === '' ? w.slice(0, i) : w.replace(/'/g, '')
}

const VOWEL = /[aeiouy]/

/**
 * Light English stemmer (roughly Porter's step 1 plus common derivational
 * endings). Conservative on purpose: over-stemming merges unrelated words,
 * which costs precision on keyword queries; both the documents and the query
 * go through the same function, so consistency matters more than linguistics.
 */
export function stem(word: string): string {
  let w = dropPossessive(word)
  if (w.length <= 3 || /\d/.test(w)) return w

  // plurals and third-person -s
  if (w.endsWith('sses') || /(x|ch|sh|zz)es$/.test(w)) w = w.slice(0, -2)
  else if (w.endsWith('ies') && w.length > 4) w = `${w.slice(0, -3)}y`
  else if (w.endsWith('s') && !w.endsWith('ss') && !w.endsWith('us') && !w.endsWith('is')) w = w.slice(0, -1)

  // -ing / -ed, only when a vowel remains in the stem ("sing", "bed" stay)
  for (const suf of ['ing', 'ed']) {
    if (w.endsWith(suf) && w.length - suf.length >= 3 && VOWEL.test(w.slice(0, -suf.length))) {
      w = w.slice(0, -suf.length)
      if (/(at|bl|iz)$/.test(w))
        w += 'e' // rated -> rate, enabled -> enable
      else if (/([^aeiouslz])\1$/.test(w)) w = w.slice(0, -1) // stopped -> stop (but billed -> bill)
      break
    }
  }

  // common derivational endings, longest first
  const rules: [string, string][] = [
    ['ational', 'ate'],
    ['ization', 'ize'],
    ['fulness', 'ful'],
    ['iveness', 'ive'],
    ['ousness', 'ous'],
    ['biliti', 'ble'],
    ['ation', 'ate'],
    ['ement', ''],
    ['ment', ''],
    ['ably', 'able'],
    ['ibly', 'ible'],
    ['ally', 'al'],
    ['ly', ''],
  ]
  for (const [suf, rep] of rules) {
    if (w.endsWith(suf) && w.length - suf.length >= 4) {
      w = w.slice(0, -suf.length) + rep
      break
    }
  }
  // normalise final -y/-ie and -e so "pay"/"paid" aside, "rate"/"rat(ing)" meet
  if (w.endsWith('e') && w.length > 4) w = w.slice(0, -1)
  if (w.endsWith('y') && w.length > 3 && !VOWEL.test(w[w.length - 2]!)) w = `${w.slice(0, -1)}i`
  return w
}

/** Content terms for indexing and querying: words minus stopwords, stemmed. */
export function terms(text: string): string[] {
  const out: string[] = []
  for (const w of words(text)) {
    if (STOPWORDS.has(w)) continue
    if (w.length === 1 && !/\d/.test(w)) continue
    out.push(stem(w))
  }
  return out
}
