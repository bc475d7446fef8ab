/** How a request's body was sent, for the refusal of one that was not read as JSON (issue 47). */

/** True when a Content-Type says JSON (`application/json`, `application/…+json`, any parameters). */
export const isJsonType = (contentType: string | undefined) => /^application\/([\w.+-]*\+)?json\s*(;|$)/i.test(contentType ?? '')

/** The message for a body that was not read as JSON because of how it was sent. */
export const notReadAsJson = (contentType: string | undefined) =>
  `The body was not read as JSON: it came with ${contentType ? `Content-Type ${contentType.slice(0, 100)}` : 'no Content-Type'}; send it with Content-Type: application/json`
