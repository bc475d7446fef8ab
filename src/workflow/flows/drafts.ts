import { BadResponse } from '../model'

/**
 * The shape of a list of draft nodes, before the batch of POST /mutate checks what it says
 * (parents, fields, enums, limits): an array of 1 to `max` objects with a `draft-` id of their
 * own. The batch would keep a non-draft id as the real id, which a model must never choose.
 */
export function checkDrafts(value: unknown, field: string, max: number, seen = new Set<string>()): Record<string, unknown>[] {
  if (!Array.isArray(value) || value.length === 0)
    throw new BadResponse(`${field} is required: a non-empty array of {id:"draft-…", type, parentId, data:{label}}`)
  if (value.length > max) throw new BadResponse(`${field} has ${value.length} nodes; at most ${max} are allowed`)
  return value.map((d, i) => {
    if (!d || typeof d !== 'object' || Array.isArray(d))
      throw new BadResponse(`${field}[${i}] must be an object {id, type, parentId, data}`)
    const { id, type, parentId, data } = d as Record<string, unknown>
    if (typeof id !== 'string' || !/^draft-[A-Za-z0-9_.-]{1,60}$/.test(id))
      throw new BadResponse(`${field}[${i}].id must be your own id starting with "draft-", e.g. "draft-${i + 1}"`)
    if (seen.has(id)) throw new BadResponse(`${field}[${i}].id ${id} is used twice; every draft id must be unique`)
    seen.add(id)
    return { id, type, ...(parentId === undefined ? {} : { parentId }), data }
  })
}
