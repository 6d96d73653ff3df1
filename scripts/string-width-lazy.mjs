// `string-width` for the bundled command line (scripts/bundle-cli.mjs resolves every import of
// string-width to this file). The real one builds an Intl.Segmenter and Unicode-property regular
// expressions when it loads, which loads ICU's data: tens of milliseconds of every command's
// start-up, for help texts that are plain ASCII. A string of printable ASCII is as wide as it is
// long; any other string is measured by the real string-width, which the bundle initializes on
// its first use (esbuild bundles a module that is required, not imported, as a lazy one).
import stripAnsi from 'strip-ansi';

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;
let real;

export default function stringWidth(string, options = {}) {
  if (typeof string !== 'string' || string.length === 0) return 0;
  const visible = options.countAnsiEscapeCodes ? string : stripAnsi(string);
  if (PRINTABLE_ASCII.test(visible)) return visible.length;
  // A require(), not an import: the bundle initializes the real one only here.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  real ??= require('string-width').default;
  return real(string, options);
}
