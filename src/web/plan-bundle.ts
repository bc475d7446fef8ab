import { join } from 'node:path'
import { bundleScript, writeScript } from './build-script'
import page from './plan/plan.html' with { type: 'text' }

/**
 * The plan view of the MCP server (ui://arbor/plan.html): src/web/plan/view.ts and the ext-apps
 * `App` it uses, bundled by Bun.build into one script and set inside plan.html, so the view is
 * one document that loads nothing from anywhere (a host's default CSP holds). A source checkout
 * builds it on the first resources/read; the single executable carries the script `npm run
 * build` wrote (`bun src/web/plan-bundle.ts dist/assets`, embedded by src/binary.ts).
 */
let bundled: string | undefined
// imported as text (bun-types calls every .html import an HTMLBundle)
const template = page as unknown as string
let built: Promise<string> | undefined

/** The single executable hands over the script it embeds. */
export function useBundledPlan(js: string) {
  bundled = js
}

export const buildPlanScript = (): Promise<string> => bundleScript(join(import.meta.dir, 'plan', 'view.ts'), 'the plan view script')

/** The script inside an HTML <script>: a `</script` in it would end the element early. */
const inline = (js: string) => js.replace(/<\/(script)/gi, '<\\/$1').replace(/<!--/g, '<\\!--')

/** The whole document, built once per process. */
export function planHtml(): Promise<string> {
  built ??= (bundled !== undefined ? Promise.resolve(bundled) : buildPlanScript()).then(
    (js) => template.replace('/*SCRIPT*/', () => inline(js)),
    (err) => {
      built = undefined // tried again by the next read
      throw err
    },
  )
  return built
}

// `bun src/web/plan-bundle.ts <dir>`: write <dir>/plan.js for the single executable
if (import.meta.main) await writeScript(buildPlanScript, 'plan.js')
