import { existsSync } from 'node:fs';
import type { Browser } from 'playwright-core';

/**
 * Debian's Chromium for the browser tests, driven by playwright-core (which downloads no browser of its
 * own). Missing, the tests say they were skipped and how to install it — except under `CI=true`, where
 * `.ci/run` installs it, so a missing one is a failure (`requireChromium`).
 */
export const CHROMIUM = '/usr/bin/chromium';

/** Why there is no browser, when there is none: a sentence for the skip message. */
export const CHROMIUM_MISSING = `no ${CHROMIUM}: install it (\`apt-get update && apt-get install -y chromium\`) to run the browser tests`;

export const chromiumAvailable = (): boolean => existsSync(CHROMIUM);

/** Under CI a missing browser fails instead of skipping. */
export function requireChromium(): void {
  if (process.env['CI'] === 'true' && !chromiumAvailable()) throw new Error(`CI=true but ${CHROMIUM_MISSING}`);
}

/** A headless Chromium that makes no connection of its own (this machine's network is closed). */
export async function launchChromium(): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  return chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-background-networking'] });
}
