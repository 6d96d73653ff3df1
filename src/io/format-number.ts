/**
 * The one number format of the console: thousands separators and two decimals; a value below 1
 * with three significant digits, so that a small one (GPU hours of a short run) keeps its digits;
 * float noise below a millionth prints as 0.00.
 */
export function formatNumber(x: number): string {
  if (!Number.isFinite(x)) return String(x);
  if (Math.abs(x) < 1e-6) return '0.00';
  if (Math.abs(x) < 1) return formatDecimal(Number(x.toPrecision(3)), 2, 9);
  return formatDecimal(x, 2, 2);
}

/**
 * `x.toLocaleString('en-US', { minimumFractionDigits, maximumFractionDigits })`, digit for digit,
 * without Intl: the first use of Intl loads ICU's locale data, which costs a command tens of
 * milliseconds of start-up. As ICU does, it rounds the shortest decimal that reads back as `x`
 * (what `String(x)` prints) half away from zero, and keeps the sign of a negative value that
 * rounds to zero (`-0.00`). Grouping is by thousands with commas. Not finite: as Intl prints it.
 */
export function formatDecimal(x: number, minimumFractionDigits: number, maximumFractionDigits: number): string {
  if (!Number.isFinite(x)) return x.toLocaleString('en-US', { minimumFractionDigits, maximumFractionDigits });
  const negative = x < 0 || Object.is(x, -0);
  // The shortest round-trip decimal of |x| as digits and the position of the decimal point.
  const [mantissa, exponentText] = String(Math.abs(x)).split('e');
  const [whole, fraction = ''] = mantissa.split('.');
  let digits = (whole + fraction).replace(/^0+/, '');
  let point = whole.replace(/^0+/, '').length + Number(exponentText ?? 0);
  if (digits === '') {
    digits = '0';
    point = 1;
  } else if (whole.replace(/^0+/, '') === '') {
    // 0.00123: the leading zeros of the fraction move the point left.
    point = Number(exponentText ?? 0) - (fraction.length - fraction.replace(/^0+/, '').length);
  }
  // Digits up to maximumFractionDigits after the point, the rest rounded half away from zero.
  const keep = point + maximumFractionDigits;
  let kept: string;
  if (keep < 0) kept = '';
  else if (keep >= digits.length) kept = digits + '0'.repeat(keep - digits.length);
  else {
    kept = digits.slice(0, keep);
    if (digits.charCodeAt(keep) >= 53 /* '5' */) kept = increment(kept);
  }
  // `kept` holds the value x 10^maximumFractionDigits (it may have gained a digit by carrying).
  const padded = kept.padStart(maximumFractionDigits + 1, '0');
  const integerPart = padded.slice(0, padded.length - maximumFractionDigits).replace(/^0+(?=\d)/, '');
  let fractionPart = padded.slice(padded.length - maximumFractionDigits);
  while (fractionPart.length > minimumFractionDigits && fractionPart.endsWith('0')) fractionPart = fractionPart.slice(0, -1);
  const grouped = integerPart.replace(/\B(?=(\d{3})+$)/g, ',');
  return `${negative ? '-' : ''}${grouped}${fractionPart === '' ? '' : `.${fractionPart}`}`;
}

/** A string of decimal digits plus one (`'199'` -> `'200'`, `''` -> `'1'`, `'99'` -> `'100'`). */
function increment(digits: string): string {
  let i = digits.length - 1;
  while (i >= 0 && digits[i] === '9') i--;
  if (i < 0) return '1' + '0'.repeat(digits.length);
  return digits.slice(0, i) + String(Number(digits[i]) + 1) + '0'.repeat(digits.length - 1 - i);
}

/** An integer as `12,345,678`, as `toLocaleString('en-US')` prints it (without Intl's start-up). */
export function formatInteger(value: number): string {
  return formatDecimal(value, 0, 0);
}
