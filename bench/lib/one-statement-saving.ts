// The saving step's one statement for a write's events and changes, as the app sent it until the
// fourteenth pass (bench/writes.md, "Fourteenth pass: the saving step"), for the benches that time
// it: history's statement (sql/history/insert-one.sql or insert-many.sql) and the events'
// (sql/events/insert-many.sql) joined in one data-modifying statement, their text today's.
// Parameters: insertWithChangeSql $1 project, $2..$16 sql/history/insert-one.sql's, $17 the events;
// insertWithChangesSql $1 project, $2..$8 sql/history/insert-many.sql's, $9 the events. Returns, as
// then, each event's seq with the one change's id, or the changes' ids (event false) and the
// events' seqs (event true).

import eventsSql from '../../sql/events/insert-many.sql' with { type: 'text' }
import changesSql from '../../sql/history/insert-many.sql' with { type: 'text' }
import changeSql from '../../sql/history/insert-one.sql' with { type: 'text' }

/** A statement's text without its comment lines. */
const body = (sql: string) => sql.replace(/^--.*\n/gm, '').trim()

/** The events' insert with its events in parameter `$n`. */
const events = (n: number) => body(eventsSql).replace('$2::jsonb', `$${n}::jsonb`)

export const insertWithChangeSql = `with ch as (\n${body(changeSql)}\n)\n${events(17).replace(/returning seq$/, 'returning seq, (select id from ch) as change_id')}`

export const insertWithChangesSql = `with ch as (\n${body(changesSql)}\n), ev as (\n${events(9)}\n)\nselect false as event, id from ch\nunion all\nselect true as event, seq as id from ev`
