-- Every committed write of a node or an iteration records its changes (history.md, 2), whether or
-- not it sends an event: updateIteration changing only gitTags or sortOrder sends none, and its
-- change left the project's revision where it was, so GET /iterations kept answering from before
-- it (issue 50). The revision now also advances with the changes recorded, through the same
-- deferred trigger as the events' (migration 0013): once per project and transaction, at the
-- commit. src/history/record.ts says so on the revision channel in the same transaction.
create constraint trigger changes_advance_revision
after insert on changes
deferrable initially deferred
for each row execute function advance_project_revision();
