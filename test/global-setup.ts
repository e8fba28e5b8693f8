// Before any test file: dist/ up to date, since the CLI tests run bin/portcullis.cjs as an
// operator would (compiled). Once here, never from several test workers at the same time.
// @ts-expect-error plain ESM script without types
import { ensureBuilt } from "../scripts/build.mjs";

export default function setup(): void {
  ensureBuilt();
}
