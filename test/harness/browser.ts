import { existsSync } from "node:fs";
import { chromium, type Browser } from "playwright-core";

/** Debian's chromium (`.ci/run` installs it); playwright-core never downloads a browser here. */
export const CHROMIUM = "/usr/bin/chromium";
export const hasChromium = () => existsSync(CHROMIUM);

/**
 * Headless, and quiet on this machine's closed network: without the background-networking flags
 * chromium keeps opening connections that the sandbox refuses.
 */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
}
