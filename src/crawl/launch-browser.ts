/**
 * Starts the system Chromium through puppeteer-extra with the stealth plugin (navigator.webdriver
 * false, a regular Chrome user agent, plugins, window.chrome, ...). Puppeteer never downloads a
 * browser (.puppeteerrc.cjs).
 *
 * Each browser gets a fresh profile directory and talks to us over a pipe, not a socket: when
 * this process dies, the pipe closes and Chromium exits with it, so a killed worker leaves no
 * orphaned browsers behind.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import puppeteer, { type Browser } from 'puppeteer';
import { addExtra } from 'puppeteer-extra';
import StealthPlugin from 'puppeteer-extra-plugin-stealth';
import type { ProxyConfig } from './proxy-url.js';

export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
  '--disable-sync',
  // wheel scrolls land at once instead of animating on after the page has been read
  '--disable-smooth-scrolling',
];

export const VIEWPORT = { width: 1366, height: 900 };

export interface LaunchOptions {
  chromiumPath: string;
  /** Profiles are created under this directory (one per browser, removed after close). */
  profileRoot: string;
  proxy: ProxyConfig | null;
  /** Longest wait for one DevTools call before it fails. */
  protocolTimeoutMs: number;
}

export interface LaunchedBrowser {
  browser: Browser;
  pid: number | undefined;
  profileDir: string;
}

let stealthPuppeteer: ReturnType<typeof addExtra> | undefined;

function driver(): ReturnType<typeof addExtra> {
  if (!stealthPuppeteer) {
    stealthPuppeteer = addExtra(puppeteer as never);
    stealthPuppeteer.use(StealthPlugin());
  }
  return stealthPuppeteer;
}

export function proxyArgs(proxy: ProxyConfig | null): string[] {
  if (!proxy) return [];
  // Chromium sends loopback traffic around a proxy unless told otherwise; a local proxy
  // (a tunnel, or the ones tests start) must see it too.
  return [`--proxy-server=${proxy.server}`, '--proxy-bypass-list=<-loopback>'];
}

export async function launchBrowser(options: LaunchOptions): Promise<LaunchedBrowser> {
  mkdirSync(options.profileRoot, { recursive: true });
  const profileDir = mkdtempSync(path.join(options.profileRoot, 'profile-'));
  try {
    const browser = (await driver().launch({
      executablePath: options.chromiumPath,
      headless: true,
      pipe: true,
      userDataDir: profileDir,
      defaultViewport: VIEWPORT,
      args: [...CHROMIUM_ARGS, `--window-size=${VIEWPORT.width},${VIEWPORT.height}`, ...proxyArgs(options.proxy)],
      // the platform stops browsers in order on shutdown; puppeteer must not add signal handlers per launch
      handleSIGINT: false,
      handleSIGTERM: false,
      handleSIGHUP: false,
      protocolTimeout: options.protocolTimeoutMs,
    })) as unknown as Browser;
    return { browser, pid: browser.process()?.pid, profileDir };
  } catch (err) {
    rmSync(profileDir, { recursive: true, force: true });
    throw err;
  }
}
