// `assert` for the bundled command line (scripts/bundle-cli.mjs resolves yargs' import of it to
// this file). yargs imports Node.js's assert module for two internal checks, and loading that
// module (its error classes, its comparison code) was about a twentieth of `servesim --help`'s
// start-up. A check that holds needs none of it: only a failing one loads the real module, which
// then throws exactly the error it always throws.
let real;

// A require(), not an import: the real module is loaded only when a check fails.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const assert = () => (real ??= require('node:assert'));

export function strictEqual(actual, expected, message) {
  if (!Object.is(actual, expected)) assert().strictEqual(actual, expected, message);
}

export function notStrictEqual(actual, expected, message) {
  if (Object.is(actual, expected)) assert().notStrictEqual(actual, expected, message);
}
