import { STATUSES, TIERS } from '../accounts/model'

/** The CLI's help: `arbor --help`, and on stderr after a command line it cannot read. docs/cli.md says the same at length. */
export const USAGE = `Usage: arbor [command] [options]

Server
  serve                      start the server (the default when no command is given)
  mcp                        the MCP server over stdio (ARBOR_API_KEY, ARBOR_API_URL, ARBOR_PROJECT_ID)

Users and keys (the running server's admin API: ADMIN_TOKEN, --url URL)
  user add NAME [--tier T] [--status S] [--contributor]
  user list [--json]
  user set USER_ID [--name N] [--tier T] [--status S] [--lapsed true|false]
                   [--contributor true|false] [--credits-limit N|none]
                   T: ${TIERS.join(', ')}   S: ${STATUSES.join(', ')}
  key create USER_ID [--label L] [--role R] [--project ID]...
  key scope KEY_ID --role R [--project ID]...
                             a live key's new scope: it holds at once, on every replica
  key revoke KEY_ID
  key mint USER [--label L] [--role R] [--project ID]...
                             another key for a user (id or name) written straight into the stopped
                             database (DATA_DIR or DATABASE_URL): no server or ADMIN_TOKEN needed
                             R: read, propose, work, write (default); --project (1-50): only these

Data
  backup [FILE]              a consistent backup (NDJSON; stdout without FILE): through the running
                             server when one answers with ADMIN_TOKEN, else from the stopped database
  restore FILE               load a backup into the configured database, which must be empty
  import PATH --key KEY      load an OKF bundle (a directory, or the JSON of GET /export-okf) as a new
                             project of the key's user [--name NAME] [--url URL]
  doctor                     check the configuration, database, model, port, data directory and disk
  healthcheck [--url URL]    exit 0 when the running server answers GET /healthz with 200, else 1

  --help, -h                 this text          --version, -v    the version

The server and every command read the same environment (PORT, DATA_DIR, DATABASE_URL, ADMIN_TOKEN, …).
Commands that talk to a running server default to http://127.0.0.1:$PORT; --url URL names another.
Exit status: 0 done, 1 failed (the message says why), 2 bad command line or setting, 3 DATA_DIR in use.
`
