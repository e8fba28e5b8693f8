/**
 * The shape of the sources, measured (docs/architecture.md "How to check it"): import cycles,
 * imports from one family folder into another, production files over the size limit, and the
 * places that apply cross-cutting rules by hand. `npm run check:architecture` prints the report;
 * test/integration/platform/architecture.test.ts holds every figure at its target.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

export const root = resolve(import.meta.dirname, "..");

/** Families that may import one another (each a dependency of meaning, docs/architecture.md). */
export const ALLOWED_FAMILY_ARROWS: readonly string[] = [
  // The sweeper deletes expired device codes a day late, so a late poll still gets expired_token.
  "maintenance -> device",
];

/** A production file longer than this is split (docs/architecture.md "Small pieces"). */
export const MAX_LINES = 300;

export interface SourceFile {
  /** Path from the repository root, `/`-separated. */
  path: string;
  text: string;
  /** Relative imports, resolved to repository paths (type-only ones included: they are arrows of meaning too). */
  imports: string[];
}

const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+["'](\.{1,2}\/[^"']+)["']|import\(\s*["'](\.{1,2}\/[^"']+)["']\s*\)/g;

function walk(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) walk(full, out);
    else if (/\.ts$/.test(name) && !/\.d\.ts$/.test(name)) out.push(full);
  }
  return out;
}

const isTest = (path: string) => /\.test\.ts$/.test(path);

/** The production TypeScript of `dirs` (tests excluded), with each file's resolved relative imports. */
export function sources(dirs: readonly string[] = ["src", "rest-bridge"], base = root): SourceFile[] {
  return dirs
    .flatMap((d) => walk(join(base, d)))
    .map((full) => relative(base, full).split("\\").join("/"))
    .filter((path) => !isTest(path))
    .sort()
    .map((path) => {
      const text = readFileSync(join(base, path), "utf8");
      const imports = [...text.matchAll(IMPORT)].map((m) => join(dirname(path), (m[1] ?? m[2])!).split("\\").join("/"));
      return { path, text, imports };
    });
}

/** Strongly connected components of two or more files (Tarjan): each one is an import cycle. */
export function cycles(files: readonly SourceFile[]): string[][] {
  const known = new Set(files.map((f) => f.path));
  const edges = new Map(files.map((f) => [f.path, f.imports.filter((i) => known.has(i) && i !== f.path)]));
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let next = 0;
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1) found.push(component.sort());
  };
  for (const f of files) if (!index.has(f.path)) visit(f.path);
  return found;
}

/** `src/modules/<family>/…` → the family; anything else → null. */
export function familyOf(path: string): string | null {
  return /^src\/modules\/([^/]+)\//.exec(path)?.[1] ?? null;
}

/** Every import from one family's folder into another's: `from -> to: file imports target`. */
export function familyImports(files: readonly SourceFile[]): { arrow: string; file: string; target: string }[] {
  return files.flatMap((f) => {
    const from = familyOf(f.path);
    if (!from) return [];
    return f.imports
      .map((target) => ({ target, to: familyOf(target) }))
      .filter((i) => i.to !== null && i.to !== from)
      .map((i) => ({ arrow: `${from} -> ${i.to}`, file: f.path, target: i.target }));
  });
}

/** Family imports outside ALLOWED_FAMILY_ARROWS. */
export function forbiddenFamilyImports(files: readonly SourceFile[], allowed = ALLOWED_FAMILY_ARROWS) {
  return familyImports(files).filter((i) => !allowed.includes(i.arrow));
}

/**
 * Anything below the families importing one (core, trpc, db... must not). The composition roots
 * may: src/index.ts, src/app.ts, src/modules/index.ts, src/trpc/app-router.ts, the REST bridge,
 * the OpenAPI document, the CLI and the import.
 */
export function upwardImports(files: readonly SourceFile[]): { file: string; target: string }[] {
  const below = (p: string) =>
    /^src\/(core|db|crypto|mail|config|http|security|metrics|social-providers|rate-limit|trpc)\//.test(p) && p !== "src/trpc/app-router.ts";
  return files.flatMap((f) =>
    below(f.path) ? f.imports.filter((t) => familyOf(t) !== null && !isDeclarationLeaf(t)).map((target) => ({ file: f.path, target })) : [],
  );
}

/**
 * A family's config section and error table (`<family>.config.ts`, `<family>.errors.ts`): data
 * the config schema and src/errors.ts compose, so they may be imported from below. They stay
 * leaves: importing nothing of any family (leafImports).
 */
export const isDeclarationLeaf = (path: string) => /^src\/modules\/[^/]+\/[^/]+\.(config|errors)\.ts$/.test(path);

export function leafImports(files: readonly SourceFile[]): { file: string; target: string }[] {
  return files.flatMap((f) => (isDeclarationLeaf(f.path) ? f.imports.filter((t) => familyOf(t) !== null).map((target) => ({ file: f.path, target })) : []));
}

export function longFiles(files: readonly SourceFile[], max = MAX_LINES): { path: string; lines: number }[] {
  return files
    .map((f) => ({ path: f.path, lines: f.text.split("\n").length - (f.text.endsWith("\n") ? 1 : 0) }))
    .filter((f) => f.lines > max && !f.path.startsWith("src/db/migrations/"));
}

/** Lines matching `pattern` outside `allowedFiles`: a rule applied by hand where its one home is elsewhere. */
export function sitesOutside(files: readonly SourceFile[], pattern: RegExp, allowedFiles: (path: string) => boolean): string[] {
  return files.flatMap((f) =>
    allowedFiles(f.path)
      ? []
      : f.text
          .split("\n")
          .map((line, i) => ({ line, i }))
          .filter(({ line }) => pattern.test(line) && !/^\s*(\*|\/\/)/.test(line))
          .map(({ i }) => `${f.path}:${i + 1}`),
  );
}

/** A write of the sessions table: the session core's (and the store's own) alone, so none forgets an eviction. */
export const SESSION_WRITE = /app\.sessions\.(insertSignUp|insertSessionUnlessBanned|extend)\(|\b(insert|insertMany|nativeUpdate|nativeDelete|upsert|upsertMany)\(\s*Session\b/;

/**
 * A citation a reader of the repository cannot follow: the team's notes kept outside it
 * (CONTRACT, ARCHITECTURE, STACK and PERFORMANCE notes, the shared folder) or an issue number.
 * Comments cite a section of docs/ or an RFC (docs/architecture.md "Style" 10).
 */
export const UNSHIPPED_CITATION = /\b(CONTRACT|ARCHITECTURE|STACK|PERFORMANCE)\.md\b|\.\.\/shared\/|\/work\/shared|\b[Ii]ssues? #?\d+\b|\(#\d+\b/;

/** Every source file of `dirs`, tests and scripts included (comments cite the same way there). */
export function textFiles(dirs: readonly string[] = ["src", "rest-bridge", "test", "bench", "scripts", "console/src", "packages/client/src"], base = root): SourceFile[] {
  const all = (dir: string, out: string[] = []): string[] => {
    for (const name of readdirSync(dir)) {
      const full = join(dir, name);
      if (statSync(full).isDirectory()) {
        if (name !== "node_modules") all(full, out);
      } else if (/\.(ts|tsx|mjs|cjs)$/.test(name) && !/\.d\.ts$/.test(name)) out.push(full);
    }
    return out;
  };
  return dirs.flatMap((d) => all(join(base, d))).map((full) => {
    const path = relative(base, full).split("\\").join("/");
    return { path, text: readFileSync(full, "utf8"), imports: [] };
  });
}

/** Lines (comments included) that match `pattern`: `path:line`. */
export function linesMatching(files: readonly SourceFile[], pattern: RegExp): string[] {
  return files.flatMap((f) =>
    f.text
      .split("\n")
      .map((line, i) => ({ line, i }))
      .filter(({ line }) => pattern.test(line))
      .map(({ i }) => `${f.path}:${i + 1}`),
  );
}

/** The report `npm run check:architecture` prints and the architecture test holds at its targets. */
export function report(files = sources()) {
  return {
    cycles: cycles(files),
    forbiddenFamilyImports: forbiddenFamilyImports(files),
    upwardImports: upwardImports(files),
    leafImports: leafImports(files),
    longFiles: longFiles(files),
    evictionSites: sitesOutside(files, /sessionCache\.evict/, (p) => p.startsWith("src/core/session/")),
    sessionWrites: sitesOutside(files, SESSION_WRITE, (p) => p.startsWith("src/core/session/") || p.startsWith("src/db/")),
    unshippedCitations: linesMatching(textFiles(), UNSHIPPED_CITATION),
    handAppliedGuards: sitesOutside(
      files,
      /AuthError\("(IMPERSONATION_NOT_ALLOWED|API_KEY_SESSION_NOT_ALLOWED|SESSION_NOT_FRESH)"|assertSafeCallback\(|isFresh\(|impersonatedBy\) throw/,
      (p) => p === "src/trpc/init.ts" || p === "src/core/access.ts" || p === "src/core/step-up.ts" || p === "src/security/origins.ts",
    ),
  };
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  const r = report();
  for (const [name, items] of Object.entries(r)) {
    console.log(`${name}: ${items.length}`);
    for (const item of items) console.log(`  ${typeof item === "string" ? item : JSON.stringify(item)}`);
  }
  process.exit(Object.values(r).some((items) => items.length > 0) ? 1 : 0);
}
