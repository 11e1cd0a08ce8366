/**
 * The fixture marketplace's data: for every keyword a deterministic list of on-sale and sold
 * items, generated from a seed the first time the keyword is searched (same seed + keyword =
 * same items, in every process). Newest first, like the real site's default order.
 *
 * Tests and demos change it between crawls the way the market would: an item sells (it moves
 * from the on-sale list to the top of the sold list), a price changes, new items are listed
 * (they appear at the top of the on-sale list).
 */
import { seededRandom } from '../../lib/seeded-random.js';

export type FixtureStatus = 'on_sale' | 'sold';

export interface FixtureItem {
  sourceId: string;
  title: string;
  price: number;
  status: FixtureStatus;
}

/** Simulated trading: every `everyMs`, per keyword, `sold` on-sale items sell and `listed` new ones appear. */
export interface MarketActivity {
  everyMs: number;
  sold: number;
  listed: number;
}

export interface CatalogOptions {
  /** Items per results page (default 120). */
  itemsPerPage?: number;
  /** Pages of items each status has at first (default 5); past them the site shows "no results". */
  pages?: number;
  /** Changes every keyword's items (default "fixture"). */
  seed?: string;
  /** Off by default; the demo turns it on so that later crawls see a moving market. */
  activity?: MarketActivity;
  /**
   * Keywords kept in memory (default 200, about 250 kB each): past it the least recently searched
   * keyword is forgotten (searched again, it starts over from its seed, losing the trades made to
   * it). Bounds the memory whatever keywords a client searches.
   */
  maxKeywords?: number;
}

/** Default of CatalogOptions.maxKeywords. */
export const DEFAULT_MAX_KEYWORDS = 200;

interface KeywordListing {
  onSale: FixtureItem[];
  sold: FixtureItem[];
  nextSerial: number;
  prefix: string;
  random: () => number;
  /** When market activity was last applied (ms). */
  tradedAt?: number;
}

const ADJECTIVES = ['limited', 'rare', 'new', 'boxed', 'signed', 'vintage', 'complete', 'official', 'mint', 'used'];
const NOUNS = ['figure', 'acrylic stand', 'keychain', 'poster', 'artbook', 'plush', 'card set', 'badge', 'tapestry', 'CD'];

/** FNV-1a, 32 bit. */
export function hash32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

export class FixtureCatalog {
  readonly itemsPerPage: number;
  readonly pages: number;
  private readonly seed: string;
  private readonly activity: MarketActivity | undefined;
  private readonly maxKeywords: number;
  /** In order of last use (a Map keeps insertion order: a used keyword is moved to the end). */
  private readonly listings = new Map<string, KeywordListing>();

  constructor(options: CatalogOptions = {}) {
    this.itemsPerPage = options.itemsPerPage ?? 120;
    this.pages = options.pages ?? 5;
    this.seed = options.seed ?? 'fixture';
    this.activity = options.activity;
    this.maxKeywords = Math.max(1, options.maxKeywords ?? DEFAULT_MAX_KEYWORDS);
  }

  /** How many keywords are held in memory now (at most maxKeywords). */
  get keywordCount(): number {
    return this.listings.size;
  }

  /**
   * Applies the market activity due for a keyword by `now` (one round per `everyMs` elapsed
   * since the keyword was first searched). Which items sell follows the keyword's seed.
   */
  trade(keyword: string, now: number): void {
    const a = this.activity;
    if (!a) return;
    const l = this.listing(keyword);
    l.tradedAt ??= now;
    const rounds = Math.floor((now - l.tradedAt) / a.everyMs);
    for (let r = 0; r < rounds; r++) {
      const window = Math.min(l.onSale.length, this.pages * this.itemsPerPage);
      const picked = new Set<string>();
      while (picked.size < Math.min(a.sold, window)) picked.add(l.onSale[Math.floor(l.random() * window)]!.sourceId);
      this.sell(keyword, [...picked]);
      this.list(keyword, a.listed);
    }
    l.tradedAt += rounds * a.everyMs;
  }

  /** Items of one results page (1-based); empty past the last page. */
  page(keyword: string, status: FixtureStatus, page: number): FixtureItem[] {
    const list = this.listing(keyword)[status === 'sold' ? 'sold' : 'onSale'];
    const start = (page - 1) * this.itemsPerPage;
    return page < 1 ? [] : list.slice(start, start + this.itemsPerPage);
  }

  /** Every item of a keyword with this status, newest first. */
  items(keyword: string, status: FixtureStatus): FixtureItem[] {
    return [...this.listing(keyword)[status === 'sold' ? 'sold' : 'onSale']];
  }

  /** Items sell: they leave the on-sale list and top the sold list. Returns how many moved. */
  sell(keyword: string, sourceIds: string[]): number {
    const l = this.listing(keyword);
    const wanted = new Set(sourceIds);
    const moved = l.onSale.filter((i) => wanted.has(i.sourceId));
    l.onSale = l.onSale.filter((i) => !wanted.has(i.sourceId));
    l.sold.unshift(...moved.map((i) => ({ ...i, status: 'sold' as const })));
    return moved.length;
  }

  /** A seller changes a price. Returns false when the item is not listed. */
  setPrice(keyword: string, sourceId: string, price: number): boolean {
    const l = this.listing(keyword);
    const item = [...l.onSale, ...l.sold].find((i) => i.sourceId === sourceId);
    if (!item) return false;
    item.price = price;
    return true;
  }

  /** New items are listed (top of the on-sale list). Returns them. */
  list(keyword: string, count: number): FixtureItem[] {
    const l = this.listing(keyword);
    const fresh = Array.from({ length: count }, () => this.generate(l, keyword, 'on_sale'));
    l.onSale.unshift(...fresh);
    return fresh;
  }

  /** An item of any keyword searched so far. */
  find(sourceId: string): FixtureItem | undefined {
    for (const l of this.listings.values()) {
      const item = l.onSale.find((i) => i.sourceId === sourceId) ?? l.sold.find((i) => i.sourceId === sourceId);
      if (item) return item;
    }
    return undefined;
  }

  /** Forget every change (and every keyword). */
  reset(): void {
    this.listings.clear();
  }

  private listing(keyword: string): KeywordListing {
    let l = this.listings.get(keyword);
    if (l) {
      this.listings.delete(keyword);
      this.listings.set(keyword, l);
    } else {
      if (this.listings.size >= this.maxKeywords) this.listings.delete(this.listings.keys().next().value!);
      const h = hash32(`${this.seed}:${keyword}`);
      l = { onSale: [], sold: [], nextSerial: 1, prefix: `m${(h % 90000) + 10000}`, random: seededRandom(h) };
      const n = this.pages * this.itemsPerPage;
      // sold items are older listings: generate them first so on-sale serials are the newest
      const sold = Array.from({ length: n }, () => this.generate(l!, keyword, 'sold'));
      l.onSale = Array.from({ length: n }, () => this.generate(l!, keyword, 'on_sale')).reverse();
      l.sold = sold.reverse();
      this.listings.set(keyword, l);
    }
    return l;
  }

  private generate(l: KeywordListing, keyword: string, status: FixtureStatus): FixtureItem {
    const serial = l.nextSerial++;
    const adjective = ADJECTIVES[Math.floor(l.random() * ADJECTIVES.length)]!;
    const noun = NOUNS[Math.floor(l.random() * NOUNS.length)]!;
    const price = 300 + Math.round((l.random() * 29700) / 10) * 10;
    return { sourceId: `${l.prefix}${String(serial).padStart(6, '0')}`, title: `${keyword} ${adjective} ${noun} #${serial}`, price, status };
  }
}
