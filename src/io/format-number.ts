/**
 * The one number format of the console: thousands separators and two decimals; a value below 1
 * with three significant digits, so that a small one (GPU hours of a short run) keeps its digits;
 * float noise below a millionth prints as 0.00.
 */
export function formatNumber(x: number): string {
  if (!Number.isFinite(x)) return String(x);
  if (Math.abs(x) < 1e-6) return '0.00';
  if (Math.abs(x) < 1) return Number(x.toPrecision(3)).toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 9 });
  return x.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
}
