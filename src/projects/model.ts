/** The input of the project actions (POST /mutate addProject, renameProject), with docs/reference/mutate.md's messages. */
import { type Static, Type } from '@sinclair/typebox'
import { action, NonBlank, ProjectId, ruled } from '../http/action-schema'

export const PROJECT_ID_PATTERN = '^[a-z0-9][a-z0-9-]{1,62}$'
export const AddProjectBody = action(
  'addProject',
  {
    project: ruled(
      Type.Object({
        name: NonBlank('name is required: a non-empty string', 'at most 100 characters after trimming'),
        id: Type.Optional(
          ruled(
            Type.String({ pattern: PROJECT_ID_PATTERN, description: 'default: the name lowercased, whitespace runs as dashes' }),
            (id) =>
              typeof id !== 'string'
                ? 'project.id must be a string'
                : {
                    message: `Invalid project id "${id}": use 2 to 63 lowercase letters, digits and dashes, starting with a letter or digit`,
                    tip: 'Names with punctuation need an explicit project.id, for example "q3-plan".',
                  },
          ),
        ),
      }),
      { message: 'project is required: {name, id?}', tip: 'Send {action:"addProject", project:{name:"My plan", id:"my-plan"}}' },
    ),
  },
  'Create a project with its system iteration Later (Idempotency-Key is not honoured).',
)
export const RenameProjectBody = action(
  'renameProject',
  { projectId: ProjectId, name: NonBlank('name is required: a non-empty string', 'at most 100 characters after trimming') },
  'Rename a project (owner only); its id never changes.',
)

/** PATCH /projects' body, checked (afterAccess) after the tier check and the project the caller owns: 404 before 400. */
export const ArchiveInput = Type.Object(
  {
    projectId: Type.String(),
    archived: ruled(Type.Boolean(), 'archived must be a boolean (true or false)'),
  },
  { additionalProperties: false },
)

/** GET /projects' query string. */
export const ProjectsQuery = Type.Object(
  { includeArchived: Type.Optional(Type.String({ description: '`true` also lists archived projects' })) },
  { additionalProperties: false },
)

/** The body of POST /members and the query string of DELETE /members, checked after the owner check (checkInput). */
export const MemberInput = Type.Object(
  { projectId: Type.String(), userId: ruled(Type.String({ minLength: 1 }), 'userId is required') },
  { additionalProperties: false },
)

export type AddProjectBody = Static<typeof AddProjectBody>
export type ArchiveInput = Static<typeof ArchiveInput>
export type RenameProjectBody = Static<typeof RenameProjectBody>
