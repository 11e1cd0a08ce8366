/**
 * What loading ioredis costs every string method of a process (`npm run bench:strings`).
 *
 * ioredis 6.0.0 defines `class VerbatimString extends String` (built/resp/verbatim-string.js, its
 * RESP3 decoder, loaded by `import 'ioredis'`). In Node 20's V8, making String.prototype the
 * prototype of another class's prototype puts it in dictionary mode for the life of the process
 * (`%HasFastProperties(String.prototype)` turns false): from then on the optimizing compiler no
 * longer inlines `s.charCodeAt(i)`, `s.startsWith(...)`, `s.slice(...)` and the like, in the
 * platform's code and in its libraries alike. Every platform process loads ioredis (BullMQ runs on
 * it), so this is the platform's cost, not the bench's.
 *
 * Each round runs two fresh node processes, alternating: the baseline, a process that loads nothing
 * but what it measures, and the same with `import 'ioredis'` first. Each measures CPU time per call
 * of a few string operations on a ~100 kB string, then the feed parse's whole path
 * (parseFeedDocument) and feedsmith alone on a ~5 MB RSS 2.0 document. Prints the medians over
 * `--runs=N` rounds (3) and the ratio with ioredis / without.
 */
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadAverages, median, runsOption } from './stats.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));

/** One child's measures: whether String.prototype had fast properties, and CPU ms per call of each operation. */
interface Figures {
  fast: boolean;
  ms: Record<string, number>;
}

/** The child: loads ioredis when asked, then measures; prints one JSON line. */
async function child(withIoredis: boolean): Promise<void> {
  if (withIoredis) await import('ioredis');
  const { parseFeedDocument } = await import('../src/feeds/parse-feed.js');
  const { rssDocument } = await import('../test/fixtures/feeds/feed-server.js');
  const { parseRssFeed } = await import('feedsmith');
  // V8's own probe of an object's property storage; the child runs with --allow-natives-syntax.
  const hasFastProperties = new Function('o', 'return %HasFastProperties(o)') as (o: object) => boolean;

  const s = 'abc<def>ghi&amp;jkl '.repeat(5_000);
  const ms = (fn: () => unknown, calls: number): number => {
    for (let i = 0; i < 3; i++) fn();
    const before = process.cpuUsage();
    for (let i = 0; i < calls; i++) fn();
    const used = process.cpuUsage(before);
    return (used.user + used.system) / 1000 / calls;
  };
  const doc = new TextEncoder().encode(rssDocument('http://bench.test', 'b', 9_500, { pad: 4 }));
  const text = new TextDecoder().decode(doc);
  const figures: Figures['ms'] = {
    'charCodeAt, every char': ms(() => {
      let x = 0;
      for (let i = 0; i < s.length; i++) x += s.charCodeAt(i);
      return x;
    }, 50),
    'startsWith at every char': ms(() => {
      let x = 0;
      for (let i = 0; i < s.length; i++) if (s.startsWith('<d', i)) x++;
      return x;
    }, 50),
    'slice of 5, every 3rd char': ms(() => {
      let x = 0;
      for (let i = 0; i + 5 < s.length; i += 3) x += s.slice(i, i + 5).length;
      return x;
    }, 50),
    'indexOf, every <': ms(() => {
      let x = 0;
      for (let i = s.indexOf('<'); i !== -1; i = s.indexOf('<', i + 1)) x++;
      return x;
    }, 50),
    'toLowerCase, 20,000 short': ms(() => {
      let x = 0;
      for (let i = 0; i < 20_000; i++) x += 'ABCdef'.toLowerCase().length;
      return x;
    }, 50),
    'feed parse, whole path (5 MB RSS)': ms(() => parseFeedDocument(doc, null, 'http://bench.test/feed'), 6),
    'feedsmith alone (5 MB RSS)': ms(() => parseRssFeed(text), 6),
  };
  console.log(JSON.stringify({ fast: hasFastProperties(String.prototype), ms: figures } satisfies Figures));
}

function run(withIoredis: boolean): Figures {
  const args = ['--allow-natives-syntax', '--import', 'tsx', path.join(HERE, 'string-methods.ts'), withIoredis ? '--child-ioredis' : '--child'];
  const out = execFileSync(process.execPath, args, { cwd: path.join(HERE, '..'), encoding: 'utf8' });
  return JSON.parse(out.trim().split('\n').pop()!) as Figures;
}

function main(): void {
  const runs = runsOption(3);
  const without: Figures[] = [];
  const withIt: Figures[] = [];
  for (let r = 0; r < runs; r++) {
    without.push(run(false));
    withIt.push(run(true));
  }
  console.log(
    `\nCPU ms per call, median of ${runs} rounds (two fresh processes a round, alternating), ${os.cpus()[0]?.model ?? 'unknown CPU'} × ${os.cpus().length}, load ${loadAverages()}:`,
  );
  console.log(`  ${'operation'.padEnd(36)} ${'baseline'.padStart(10)} ${'+ ioredis'.padStart(10)}   ratio`);
  const fast = (figures: Figures[]) => (figures.every((f) => f.fast) ? 'yes' : figures.some((f) => f.fast) ? 'mixed' : 'no');
  console.log(`  ${'String.prototype in fast mode'.padEnd(36)} ${fast(without).padStart(10)} ${fast(withIt).padStart(10)}`);
  for (const name of Object.keys(without[0]!.ms)) {
    const a = median(without.map((f) => f.ms[name]!));
    const b = median(withIt.map((f) => f.ms[name]!));
    console.log(`  ${name.padEnd(36)} ${a.toFixed(3).padStart(10)} ${b.toFixed(3).padStart(10)}   ${(b / a).toFixed(2)}x`);
  }
  console.log('  baseline: a node process that loads only what it measures; + ioredis: the same after `import "ioredis"`, as every platform process');
}

if (process.argv.includes('--child')) await child(false);
else if (process.argv.includes('--child-ioredis')) await child(true);
else main();
