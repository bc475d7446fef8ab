// The events' payloads as api.md writes them: pure, so the webhook delivery worker uses it too.

/**
 * A payload with its keys in the order api.md writes them. The outbox keeps payloads as jsonb,
 * which stores keys by length; receivers parse JSON and do not care, but people read it too.
 */
export interface EventPayload {
  event: string
  project_id: string
  timestamp: string
  node?: { id: string; rev?: string; type: string; parentId: string | null; data: Record<string, unknown> }
  iteration?: { name: string; status?: string; previous_name?: string }
}

/** A payload as the outbox stores it (jsonb, parsed): the fields of EventPayload and any added later. */
export type StoredPayload = Omit<EventPayload, 'node' | 'iteration'> & {
  [key: string]: unknown
  node?: EventPayload['node'] & Record<string, unknown>
  iteration?: EventPayload['iteration'] & Record<string, unknown>
}

export function orderPayload(p: StoredPayload): EventPayload {
  const { event, project_id, timestamp, node, iteration, ...rest } = p
  const out: EventPayload = { event, project_id, timestamp }
  if (node) {
    const { id, rev, type, parentId, data, ...more } = node
    out.node = { id, ...(rev !== undefined ? { rev } : {}), type, parentId: parentId ?? null, data, ...more }
  }
  if (iteration) {
    const { name, status, previous_name, ...more } = iteration
    out.iteration = {
      name,
      ...(status !== undefined ? { status } : {}),
      ...(previous_name !== undefined ? { previous_name } : {}),
      ...more,
    }
  }
  return { ...out, ...rest }
}
