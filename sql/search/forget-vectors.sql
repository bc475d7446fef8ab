-- $1 embedder text: drop every stored vector of an embedder (rebuild: they are made again)
delete from search_vectors where embedder = $1
