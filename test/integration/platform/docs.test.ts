/**
 * docs/ lives in the project: its generated parts match the sources (config keys, error codes),
 * every config key is described, and every link in README.md and docs/ resolves inside the
 * repository (nothing points outside it).
 */
import { DEFAULT_RATE_LIMIT_RULES } from "../../../src/rate-limit/rate-limit.config.ts";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { staleDocs } from "../../../scripts/docs.ts";
import { configKeys } from "../../../scripts/docs/config-doc.ts";
import { resolveConfig } from "../../../src/config/index.ts";
import { ERRORS } from "../../../src/errors.ts";
import { openApiDocument } from "../../../src/openapi/index.ts";

const root = resolve(import.meta.dirname, "..", "..", "..");
const markdown = ["README.md", ...readdirSync(join(root, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)];

/** Markdown links `[text](target)` and reference-style `[x]: target`, outside code blocks. */
function linksOf(text: string): string[] {
  const prose = text.replace(/```[\s\S]*?```/g, "").replace(/`[^`\n]*`/g, "");
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g), ...prose.matchAll(/^\[[^\]]+\]:\s*(\S+)/gm)].map((m) => m[1]!);
}

describe("docs", () => {
  it("the generated tables match the sources (run `npm run docs` when this fails)", () => {
    expect(staleDocs()).toEqual([]);
  });

  it("describes every config key, including each provider type's", () => {
    const { keys, providers } = configKeys();
    const all = [...keys, ...Object.values(providers).flat()];
    expect(all.length).toBeGreaterThan(60);
    expect(all.filter((k) => !k.description).map((k) => k.key)).toEqual([]);
  });

  it("lists every error code with its status", () => {
    const doc = readFileSync(join(root, "docs/errors.md"), "utf8");
    for (const [code, [status]] of Object.entries(ERRORS)) {
      expect(doc, code).toMatch(new RegExp(`\`${code}\`.*\\| ${status} \\|`));
    }
  });

  it("links only to files of the project, and never to the team's shared folder", () => {
    const broken: string[] = [];
    for (const file of markdown) {
      const text = readFileSync(join(root, file), "utf8");
      if (/\.\.\/shared|CONTRACT\.md/.test(text)) broken.push(`${file}: mentions a file outside the project`);
      for (const link of linksOf(text)) {
        if (/^(https?:|mailto:)/.test(link)) {
          // Examples and the running service only, never a page elsewhere that could move.
          if (!/^https?:\/\/(127\.0\.0\.1|localhost)[:/]/.test(link)) broken.push(`${file}: external link ${link}`);
          continue;
        }
        const path = link.split("#")[0]!;
        if (!path) continue; // an anchor in the same file
        const target = resolve(dirname(join(root, file)), decodeURIComponent(path));
        if (relative(root, target).startsWith("..") || !existsSync(target)) broken.push(`${file}: ${link}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it("the OpenAPI document's descriptions cite nothing outside the project", () => {
    const text = JSON.stringify(openApiDocument(resolveConfig({})));
    expect(text).not.toMatch(/CONTRACT\.md|\.\.\/shared/);
  });

  it("README starts with the two set-up commands and links to docs/", () => {
    const readme = readFileSync(join(root, "README.md"), "utf8");
    const block = /```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? "";
    const commands = block.split("\n").filter(Boolean).map((l) => l.replace(/\s+#.*$/, "").trim());
    expect(commands).toEqual(["npm install && npm start", "npm test"]);
    // The quick first run is offered beside them (the tests table), with what each takes.
    expect(readme).toMatch(/\| `npm run test:quick` \|.*\| about [^|]*min \|/);
    expect(readme).toContain("docs/getting-started.md");
  });

  it("README says how long the tests take, offers the quick run, and that the browser tests need Chromium", () => {
    const readme = readFileSync(join(root, "README.md"), "utf8");
    const section = readme.slice(readme.indexOf("## Running the tests"));
    expect(section).toMatch(/`npm run test:quick`[^\n]*\d+(–\d+)? min/);
    expect(section).toMatch(/`npm test`[^\n]*\d+(–\d+)? min/);
    expect(section).toMatch(/Chromium at `\/usr\/bin\/chromium`/);
    // The quick run: SQLite only, no browser, no child processes (a first run on a fresh clone).
    const scripts = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).scripts as Record<string, string>;
    expect(scripts["test:quick"]).toMatch(/PORTCULLIS_TEST_DB=sqlite/);
    expect(scripts["test:quick"]).toMatch(/--project integration/);
    expect(scripts["test:quick"]).toMatch(/--exclude 'test\/browser\/\*\*'/);
  });

  it("getting-started states the sign-up limit the service applies; http-api.md says the session cookie holds the bare token", () => {
    const started = readFileSync(join(root, "docs/getting-started.md"), "utf8");
    const stated = /(\d+) requests\s+per (\d+)-second window per client IP address/.exec(started);
    expect(stated, "getting-started.md states the sign-up limit").not.toBeNull();
    expect({ max: Number(stated![1]), window: Number(stated![2]) }).toEqual(DEFAULT_RATE_LIMIT_RULES["/sign-up/*"]);
    const api = readFileSync(join(root, "docs/http-api.md"), "utf8");
    const cookie = /session cookie `<cookiePrefix>\.session_token`[\s\S]*?\)/.exec(api)?.[0] ?? "";
    expect(cookie).toContain("bare session token");
    expect(api).not.toMatch(/signed session cookie|session cookie[^.]*\bsigned\b(?! in)/i);
  });
});
