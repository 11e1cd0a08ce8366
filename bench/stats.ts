/** Small statistics shared by the benchmarks. */
import os from 'node:os';

/** The middle one of `xs` ordered by `key` (the upper middle for an even count). */
export function medianBy<T>(xs: T[], key: (x: T) => number): T {
  return [...xs].sort((a, b) => key(a) - key(b))[Math.floor(xs.length / 2)]!;
}

/** The middle number (the upper middle for an even count). */
export function median(xs: number[]): number {
  return medianBy(xs, (x) => x);
}

/** The p-th percentile of numbers sorted ascending (NaN for none). */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** The `--runs=N` option of a bench (at least 1), else `fallback`. */
export function runsOption(fallback: number): number {
  const arg = process.argv.find((a) => a.startsWith('--runs='));
  return arg ? Math.max(1, Number(arg.slice('--runs='.length))) : fallback;
}

/** The machine's load averages (1, 5, 15 min) as printed beside a bench's figures. */
export function loadAverages(): string {
  return os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' / ');
}
