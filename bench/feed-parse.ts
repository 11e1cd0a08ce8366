/**
 * The parse part of `npm run bench:feeds` (alone: `npm run bench:feeds -- --parse-only`).
 *
 * MB/s of CPU time per parse of 5 MB RSS 2.0, Atom 1.0 and JSON Feed documents, plus an RSS
 * document whose items carry a typical rich article (links, images with srcset, a table, a code
 * block, and a script, an iframe and handlers to strip), through the whole path a refresh runs on
 * a body (decode, XML well-formedness check, feedsmith, mapping, URL resolution, plain-text
 * titles, sanitizing of summary and content):
 * - the refresh's path: parseFeedDocument on the feed parse thread (src/feeds/parse-in-thread.ts),
 *   the document sent there and the parsed feed sent back;
 * - the same function on the bench's own thread, as refreshes ran it before the thread: a thread
 *   that has loaded ioredis (as every worker's has), whose String.prototype is slow for good
 *   (`npm run bench:strings`);
 * - the baseline, the parser library alone (feedsmith's parse of the same decoded text, leading
 *   whitespace removed, as the whole path hands it over) on a thread of its own that loads nothing
 *   else, the document sent there once: the parser at its best.
 * The three alternate within each round; the ratios whole/parser are the median of the rounds'
 * ratios, with their range. Targets >= 0.8x on RSS and Atom, >= 0.5x on the rich articles, for
 * the refresh's path. CPU time of the whole process (process.cpuUsage counts every thread: the
 * parse thread's work, both ends of the messages, garbage collection), steadier than wall time on
 * a shared machine. JSON.parse of the JSON Feed document shows the native parser's speed, as a
 * ceiling. `--runs=N` sets the number of rounds (5), each of several parses (see `alternating`).
 */
import os from 'node:os';
import { Worker } from 'node:worker_threads';
import { decodeFeedBody } from '../src/feeds/decode-body.js';
import { parseFeedDocument } from '../src/feeds/parse-feed.js';
import { FeedParseThread } from '../src/feeds/parse-in-thread.js';
import { rssDocument } from '../test/fixtures/feeds/feed-server.js';
import { loadAverages, median, runsOption } from './stats.js';

function atomDocument(items: number, pad: number): string {
  const filler = ' lorem ipsum dolor sit amet'.repeat(pad);
  const entries = Array.from(
    { length: items },
    (_, i) =>
      `<entry><title>Entry ${i}</title><id>urn:bench:${i}</id><updated>2024-01-01T00:00:00Z</updated><link rel="alternate" href="http://bench.test/e/${i}"/>` +
      `<author><name>Author ${i % 7}</name></author><summary>Summary ${i}${filler}</summary><content type="html">&lt;p&gt;Body ${i}${filler}&lt;/p&gt;</content></entry>`,
  );
  return `<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom"><title>Bench</title><id>urn:bench</id><updated>2024-01-01T00:00:00Z</updated>${entries.join('\n')}</feed>`;
}

function jsonFeedDocument(items: number, pad: number): string {
  const filler = ' lorem ipsum dolor sit amet'.repeat(pad);
  return JSON.stringify({
    version: 'https://jsonfeed.org/version/1.1',
    title: 'Bench',
    items: Array.from({ length: items }, (_, i) => ({
      id: `urn:bench:${i}`,
      url: `http://bench.test/j/${i}`,
      title: `Item ${i}`,
      summary: `Summary ${i}${filler}`,
      content_html: `<p>Body ${i}${filler}</p>`,
      date_published: '2024-01-01T00:00:00Z',
      authors: [{ name: `Author ${i % 7}` }],
    })),
  });
}

const RICH_ARTICLE =
  '<p>Intro with <a href="/posts/older">a relative link</a>, <em>emphasis</em> and <code>inline()</code>.</p>' +
  '<figure><img src="img/photo.jpg" srcset="img/photo.jpg 1x, img/photo@2x.jpg 2x" alt="photo" width="640" height="480" onerror="track()"><figcaption>Caption</figcaption></figure>' +
  '<table><thead><tr><th>Name</th><th>Value</th></tr></thead><tbody><tr><td>a</td><td>1</td></tr><tr><td colspan="2">b</td></tr></tbody></table>' +
  '<pre class="language-js"><code class="language-js">const x = a &lt; b &amp;&amp; c;</code></pre>' +
  '<ul><li>one</li><li>two <a href="https://other.example/x" target="_blank">out</a></li></ul>' +
  '<blockquote cite="/source">Quoted</blockquote><script>analytics()</script><iframe src="https://video.example/embed/1"></iframe>' +
  '<p style="color:red" onclick="x()">Closing paragraph of the article, with a few words to read.</p>';

function richRssDocument(items: number): string {
  const parts = [
    '<?xml version="1.0" encoding="UTF-8"?>\n<rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/"><channel><title>Rich</title><link>http://bench.test/</link><description>d</description>',
  ];
  for (let i = 0; i < items; i++) {
    parts.push(
      `<item><title>Rich &lt;b&gt;item&lt;/b&gt; ${i}</title><link>/rich/${i}</link><guid isPermaLink="false">rich-${i}</guid><pubDate>Mon, 01 Jan 2024 00:00:00 GMT</pubDate>` +
        `<description><![CDATA[<p>Summary of <b>item ${i}</b> with <a href="/rich/${i}">a link</a>.</p>]]></description><content:encoded><![CDATA[${RICH_ARTICLE}]]></content:encoded></item>`,
    );
  }
  parts.push('</channel></rss>');
  return parts.join('\n');
}

/** Items needed for a ~5 MB document of the given generator. */
function sized(make: (items: number) => string, targetBytes = 5 * 1024 * 1024): Uint8Array {
  const probe = Buffer.byteLength(make(100));
  return new TextEncoder().encode(make(Math.ceil((targetBytes / probe) * 100)));
}

/** CPU milliseconds (user + system, every thread of the process) one call of `fn` costs. */
async function cpuMs(fn: () => unknown): Promise<number> {
  const before = process.cpuUsage();
  await fn();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000;
}

/**
 * Each of `fns` in turn, a round at a time: in each round, each runs once unmeasured then
 * CALLS_PER_ROUND times measured. The per-round mean CPU ms of each. CPU rather than wall time,
 * and alternation, keep the comparison fair on a machine other work slows down at random; the
 * unmeasured run absorbs the garbage collection the one before left (the whole path allocates more
 * than the parser alone), so each is measured in its own steady state. Several calls a round,
 * because a full collection of the old generation falls every few parses of a 5 MB document: with
 * two calls a round one round's ratio moved by ±0.2 and the median of five by ±0.1 from run to
 * run; with six, by about ±0.05 and ±0.03.
 */
const CALLS_PER_ROUND = 6;

async function alternating(fns: Array<() => unknown>, rounds: number): Promise<number[][]> {
  const perRound: number[][] = [];
  for (let i = 0; i < rounds; i++) {
    const round: number[] = [];
    for (const fn of fns) {
      await fn();
      let sum = 0;
      for (let c = 0; c < CALLS_PER_ROUND; c++) sum += await cpuMs(fn);
      round.push(sum / CALLS_PER_ROUND);
    }
    perRound.push(round);
  }
  return perRound;
}

type Library = 'parseRssFeed' | 'parseAtomFeed' | 'parseJsonFeed';

/**
 * feedsmith alone on a thread that loads nothing else: `load` sends it a document's text (parsed
 * once), `parse` has it parse that text again; both answer with the item count.
 */
class ParserAloneThread {
  private readonly worker = new Worker(
    `const { parentPort, workerData } = require('node:worker_threads');
    let text = '', parse = null;
    import(workerData.feedsmith).then((feedsmith) => parentPort.on('message', (m) => {
      if (m.load !== undefined) { text = m.load; parse = feedsmith[m.library]; }
      const feed = parse(m.json ? JSON.parse(text) : text);
      parentPort.postMessage((feed.items ?? feed.entries ?? []).length);
    }));`,
    { eval: true, name: 'parser-alone', workerData: { feedsmith: import.meta.resolve('feedsmith') } },
  );

  load(text: string, library: Library): Promise<number> {
    return this.ask({ load: text, library, json: library === 'parseJsonFeed' });
  }

  /** The JSON Feed parser takes an object: its text is JSON.parse'd first, as the whole path does. */
  parse(json: boolean): Promise<number> {
    return this.ask({ json });
  }

  close(): Promise<number> {
    return this.worker.terminate();
  }

  private ask(message: object): Promise<number> {
    return new Promise((resolve, reject) => {
      const settle = (n: number) => {
        this.worker.off('error', reject);
        resolve(n);
      };
      this.worker.once('message', settle);
      this.worker.once('error', reject);
      this.worker.postMessage(message);
    });
  }
}

interface ParseRow {
  name: string;
  mb: number;
  items: number;
  /** MB/s of CPU time: the refresh's path (the parse thread), the same on the bench's own thread, the parser alone (null: none). */
  thread: number;
  inProcess: number;
  library: number | null;
  /** The median of the rounds' ratios whole/parser, and their lowest and highest (null: no parser). */
  threadRatio: { median: number; range: [number, number] } | null;
  inProcessRatio: { median: number; range: [number, number] } | null;
  target: number | null;
  /** CPU ms per parse on the thread reading every item, and reading only the first STORED_ARTICLES articles as a refresh does (null: not measured). */
  stored: { allMs: number; storedMs: number } | null;
}

/** What a refresh reads of a document by default: FEED_MAX_ITEMS_PER_DOCUMENT (1000). */
const STORED_ARTICLES = 1000;

const ratioOf = (ratios: number[]) => ({ median: median(ratios), range: [Math.min(...ratios), Math.max(...ratios)] as [number, number] });

async function parseBench(runs: number): Promise<ParseRow[]> {
  const pad = 4;
  // Each document is made just before it is measured and let go after: the heap holds one at a
  // time, as a worker's does.
  const documents: Array<{ name: string; make: () => Uint8Array; library: Library; target: number | null }> = [
    { name: 'RSS 2.0', make: () => sized((n) => rssDocument('http://bench.test', 'bench', n, { pad })), library: 'parseRssFeed', target: 0.8 },
    { name: 'Atom 1.0', make: () => sized((n) => atomDocument(n, pad)), library: 'parseAtomFeed', target: 0.8 },
    { name: 'JSON Feed 1.1', make: () => sized((n) => jsonFeedDocument(n, pad)), library: 'parseJsonFeed', target: null },
    { name: 'RSS 2.0, rich HTML articles', make: () => sized((n) => richRssDocument(n)), library: 'parseRssFeed', target: 0.5 },
  ];
  const parser = new FeedParseThread();
  const alone = new ParserAloneThread();
  const rows: ParseRow[] = [];
  try {
    for (const { name, make, library, target } of documents) {
      const doc = make();
      const json = library === 'parseJsonFeed';
      const items = await alone.load(decodeFeedBody(doc, null).text.replace(/^[\s\uFEFF]+/, ''), library);
      const mb = doc.byteLength / 1024 / 1024;
      const measured = await alternating(
        [() => alone.parse(json), () => parser.parse(doc, null, 'http://bench.test/feed'), () => parseFeedDocument(doc, null, 'http://bench.test/feed')],
        runs,
      );
      // What a refresh spends: it reads only the articles it stores (parse-feed.ts maxArticles).
      const stored = await alternating(
        [() => parser.parse(doc, null, 'http://bench.test/feed'), () => parser.parse(doc, null, 'http://bench.test/feed', { maxArticles: STORED_ARTICLES })],
        Math.min(runs, 3),
      );
      const mbps = (column: number) => mb / (median(measured.map((r) => r[column]!)) / 1000);
      rows.push({
        name,
        mb,
        items,
        library: mbps(0),
        thread: mbps(1),
        inProcess: mbps(2),
        threadRatio: ratioOf(measured.map(([lib, thread]) => lib! / thread!)),
        inProcessRatio: ratioOf(measured.map(([lib, , inline]) => lib! / inline!)),
        target,
        stored: { allMs: median(stored.map((r) => r[0]!)), storedMs: median(stored.map((r) => r[1]!)) },
      });
      if (json) {
        const jsonMedian = median((await alternating([() => JSON.parse(new TextDecoder().decode(doc))], runs)).map((r) => r[0]!));
        rows.push({
          name: 'baseline: JSON.parse of the JSON Feed',
          mb,
          items,
          thread: mb / (jsonMedian / 1000),
          inProcess: mb / (jsonMedian / 1000),
          library: null,
          threadRatio: null,
          inProcessRatio: null,
          target: null,
          stored: null,
        });
      }
    }
  } finally {
    await parser.close();
    await alone.close();
  }
  return rows;
}

export async function printParse(): Promise<void> {
  const runs = runsOption(5);
  console.log(
    `\nparse throughput, ~5 MB documents, MB/s of CPU time per parse (median of ${runs} rounds of ${CALLS_PER_ROUND} parses each, the three alternating), ` +
      `${os.cpus()[0]?.model ?? 'unknown CPU'} × ${os.cpus().length}, load ${loadAverages()}:`,
  );
  console.log("  thread: the refresh's path, parseFeedDocument (decode + well-formedness + feedsmith + mapping + URLs + sanitizing) on the feed parse thread");
  console.log("  in-process: the same on the bench's own thread, which has loaded ioredis (how refreshes parsed before the thread)");
  console.log('  parser: feedsmith alone on a thread of its own (parseRssFeed / parseAtomFeed / parseJsonFeed of the decoded text)');
  console.log(`  ${'document'.padEnd(40)}   MB   items  thread MB/s  in-process MB/s  parser MB/s  thread/parser (range)  in-process/parser  target (thread)`);
  const rows = await parseBench(runs);
  const ratio = (r: ParseRow['threadRatio']) => (r === null ? '' : `${r.median.toFixed(2)} (${r.range[0].toFixed(2)}–${r.range[1].toFixed(2)})`);
  for (const r of rows) {
    const target = r.target === null ? '' : `>= ${r.target.toFixed(2)}${r.threadRatio !== null && r.threadRatio.median >= r.target ? '' : ' (missed)'}`;
    console.log(
      `  ${r.name.padEnd(40)} ${r.mb.toFixed(1)} ${String(r.items).padStart(7)} ${r.thread.toFixed(1).padStart(12)} ${r.inProcess.toFixed(1).padStart(16)} ${(r.library === null ? '' : r.library.toFixed(1)).padStart(12)} ${ratio(r.threadRatio).padStart(22)} ${(r.inProcessRatio === null ? '' : r.inProcessRatio.median.toFixed(2)).padStart(18)}  ${target}`,
    );
  }
  console.log(
    `\n  a refresh reads only the first ${STORED_ARTICLES} articles it stores (FEED_MAX_ITEMS_PER_DOCUMENT): CPU ms per parse on the thread, every item / first ${STORED_ARTICLES} (median of ${Math.min(runs, 3)} alternating rounds):`,
  );
  for (const r of rows) {
    if (!r.stored) continue;
    const { allMs, storedMs } = r.stored;
    console.log(
      `  ${r.name.padEnd(40)} ${String(r.items).padStart(7)} items ${allMs.toFixed(0).padStart(6)} ms / ${storedMs.toFixed(0).padStart(5)} ms  (${(storedMs / allMs).toFixed(2)}x)`,
    );
  }
  console.log(`  load at the end: ${loadAverages()}`);
}
