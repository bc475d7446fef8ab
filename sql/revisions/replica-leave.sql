-- $1 id text: this replica stops answering from memory; writers no longer wait for it
delete from replicas where id = $1
