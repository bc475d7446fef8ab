// app.js is the browser's script, served as text (routes.ts imports it `with { type: 'text' }`).
declare const text: string
export default text
