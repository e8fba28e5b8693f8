/**
 * docs/machine-access.md's resource server is the code test/process/resource-server.test.ts
 * runs (test/fixtures/resource-server.mjs, between its markers): the docs cannot drift from
 * what was shown to work.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";

const root = join(import.meta.dirname, "../../..");

it("the docs' resource server is the tested one", () => {
  const fixture = readFileSync(join(root, "test/fixtures/resource-server.mjs"), "utf8");
  const example = /\/\/ --- docs\/machine-access\.md example ---\n([\s\S]*?)\/\/ --- end of example ---/.exec(fixture)?.[1];
  const docs = readFileSync(join(root, "docs/machine-access.md"), "utf8");
  const block = /### Protecting another service[\s\S]*?```js\n([\s\S]*?)```/.exec(docs)?.[1];
  expect(example).toBeDefined();
  expect(block).toBe(example);
});
