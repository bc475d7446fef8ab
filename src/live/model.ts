import { type Static, Type } from '@sinclair/typebox'
import { CURSOR } from '../events/model'
import { refined, ruled } from '../http/action-schema'

/** live.md, 3: a note is short */
export const MAX_NOTE = 100
/** live.md, 2: open streams per key (per replica; a 21st gets 429) */
export const MAX_STREAMS_PER_KEY = 20
/** a comment line at least this often (live.md asks for one every 15 s at most) */
export const KEEP_ALIVE_MS = 10_000
/** how often open streams check that their key and membership still hold (live.md: ended within 5 s) */
export const ACCESS_CHECK_MS = 2000
/** events per read of the stream */
export const STREAM_PAGE = 200

const Cursor = refined(
  ruled(Type.String(), {
    message: 'after must be a cursor given by GET /events (nextCursor) or by the stream (its id)',
    tip: 'Omit after (and Last-Event-ID) to start with the events committed after the stream opens.',
  }),
  (after) => after === '' || CURSOR.test(after),
)

/** GET /stream's query (and Last-Event-ID), checked after the access check. */
export const StreamQuery = Type.Object({ after: Type.Optional(Cursor) })

/** GET /stream's query string, checked after the access check (checkInput); its cursor, which Last-Event-ID may replace, by StreamQuery. */
export const StreamParams = Type.Object(
  {
    projectId: Type.String(),
    after: Type.Optional(Type.String({ description: 'a cursor (an event id, or nextCursor of GET /events); Last-Event-ID wins over it' })),
  },
  { additionalProperties: false },
)

/** POST /presence's body, each part with its message, checked after the access check (checkInput); other names are ignored. */
export const PresenceBody = refined(
  Type.Object({
    projectId: Type.String({ description: 'the project you are on' }),
    nodeId: Type.Optional(
      ruled(
        Type.String({ minLength: 1, maxLength: 200, description: 'the node you are looking at' }),
        'nodeId must be the id of a node of this project',
      ),
    ),
    field: Type.Optional(
      ruled(
        Type.String({
          minLength: 1,
          maxLength: 100,
          description:
            "the field you are editing: a data field of the node's type, or parentId. An edit intent: other actors' writes of it answer 409 being_edited while it holds",
        }),
        'field must be a data field of the node, or parentId',
      ),
    ),
    note: Type.Optional(
      ruled(
        Type.String({ maxLength: MAX_NOTE, description: `what you are doing, at most ${MAX_NOTE} characters` }),
        `note must be a string of at most ${MAX_NOTE} characters`,
      ),
    ),
  }),
  // an edit intent names the node it is on (live.md, 3); whether the field is one of that node's is read from the database (service.ts)
  (body) => body.field === undefined || body.nodeId !== undefined,
  'field needs nodeId: the field of which node you are editing',
)
export type PresenceBody = Static<typeof PresenceBody>
