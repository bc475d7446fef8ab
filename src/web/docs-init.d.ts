// docs-init.js is the docs page's script, served as text (docs.ts imports it `with { type: 'text' }`).
declare const text: string
export default text
