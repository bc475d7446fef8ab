// docs-init.js is the docs page's script, served as text (routes.ts imports it `with { type: 'text' }`).
declare const text: string
export default text
