-- A node's parent must exist in the same project. The services check this too, but only the
-- database can rule out a race: an add under a parent while another request deletes it.
-- Deleting a parent removes its subtree, as the delete action does.
alter table nodes
  add constraint nodes_parent_fk foreign key (project_id, parent_id)
  references nodes (project_id, id) on delete cascade;
