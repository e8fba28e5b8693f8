/** What stops an import before it starts (bad --from, missing tables, no secret): one clear line for the CLI. */
export class ImportError extends Error {
  override name = "ImportError";
}
