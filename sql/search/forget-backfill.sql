-- $1 embedder text: no project counts as fully embedded by this embedder any more
delete from search_backfill where embedder = $1
