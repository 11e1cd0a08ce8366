import { readFileSync, readdirSync } from 'node:fs';
import { parseFeedDocument } from './src/feeds/parse-feed.ts';
const dir = 'test/fixtures/feeds/documents/';
for (const f of readdirSync(dir).sort()) {
  try {
    const r = parseFeedDocument(readFileSync(dir + f), null, 'http://docs.example.test/feeds/' + f, { contentLocation: f === 'relative-links.xml' ? '/located/here/' : null });
    console.log('==', f, JSON.stringify(r, null, 1).replace(/\n\s*/g, ' '));
  } catch (e: any) { console.log('==', f, 'ERR', e.failure, e.message); }
}
