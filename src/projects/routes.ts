import { Elysia, t } from 'elysia'
import { withUser } from '../accounts/auth'
import type { Deps } from '../deps'
import { checkInput, ProjectQuery } from '../http/action-schema'
import { documentedBody, documentedQuery } from '../http/documented'
import { jsonText } from '../http/respond'
import { MetaBody } from '../http/schemas'
import { ArchiveInput, MemberInput, ProjectsQuery } from './model'
import { addMember, listMembers, listProjectsJson, removeMember, setArchived } from './service'

const Project = t.Object({
  id: t.String(),
  name: t.String(),
  archived: t.Boolean(),
  role: t.Union([t.Literal('owner'), t.Literal('member')]),
})
const Member = t.Object({ userId: t.String(), name: t.String(), role: t.Union([t.Literal('owner'), t.Literal('member')]) })

export const projectRoutes = (deps: Deps) =>
  new Elysia({ name: 'projects' })
    .derive(withUser(deps))
    .get(
      '/projects',
      async ({ user, query }) =>
        jsonText(await listProjectsJson(deps, user, checkInput('query', ProjectsQuery, query).includeArchived === 'true')),
      {
        response: { 200: t.Object({ projects: t.Array(Project) }) },
        detail: {
          summary: 'Projects usable as projectId: owned first, then member projects',
          tags: ['projects'],
          ...documentedQuery(ProjectsQuery),
        },
      },
    )
    .patch('/projects', ({ user, body }) => setArchived(deps, user, body), {
      response: { 200: t.Object({ project: Project, _meta: MetaBody }) },
      detail: { summary: 'Archive or unarchive a project (owner only)', tags: ['projects'], requestBody: documentedBody(ArchiveInput) },
    })
    .get('/members', ({ user, query }) => listMembers(deps, user, query), {
      response: { 200: t.Object({ members: t.Array(Member) }) },
      detail: { summary: 'People on a project, owner first', tags: ['projects'], ...documentedQuery(ProjectQuery) },
    })
    .post('/members', async ({ user, body, status }) => status(201, await addMember(deps, user, body)), {
      response: { 201: t.Object({ member: Member }) },
      detail: { summary: 'Add a member (owner only)', tags: ['projects'], requestBody: documentedBody(MemberInput) },
    })
    .delete('/members', ({ user, query }) => removeMember(deps, user, query), {
      response: { 200: t.Object({ success: t.Literal(true) }) },
      detail: { summary: 'Remove a member (owner only; never the owner)', tags: ['projects'], ...documentedQuery(MemberInput) },
    })
