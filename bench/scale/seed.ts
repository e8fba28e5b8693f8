import type pg from "pg";

/**
 * Bulk data for the scale bench, written by PostgreSQL itself (`generate_series`): a million
 * users take seconds, not the hours a million sign-ups would.
 *
 * Deterministic, so the bench can address rows without reading them back:
 * - user i (1-based): id = md5('user-' || i)::uuid, email `<first>.<last><i>@<domain>`, created
 *   one second after user i-1 (from 2024-01-01), role admin for every 1000th, banned every 500th;
 *   a credential account with a fixed argon2id hash (nobody signs in with it here);
 * - session j: raw token `scale-session-<j, 29 digits>` (the service stores its SHA-256 hex), user
 *   1 + (j mod users) unless that one is banned, expires a week after the seed's `now`.
 */

export const FIRST_NAMES = ["Ada", "Alan", "Barbara", "Claude", "Donald", "Edsger", "Frances", "Grace", "Hedy", "John", "Katherine", "Leslie", "Margaret", "Niklaus", "Radia", "Tim", "Whitfield", "Shafi", "Judea", "Ken"];
export const LAST_NAMES = ["Lovelace", "Turing", "Liskov", "Shannon", "Knuth", "Dijkstra", "Allen", "Hopper", "Lamarr", "Backus", "Johnson", "Lamport", "Hamilton", "Wirth", "Perlman", "Berners-Lee", "Diffie", "Goldwasser", "Pearl", "Thompson", "Ritchie", "Kay", "Cerf", "Kahn", "Milner"];
const DOMAINS = ["example.com", "mail.test", "corp.example"];

export const SEED_EPOCH = "2024-01-01T00:00:00Z";
/** A well-formed argon2id hash string (m=19456, t=2, p=1): the shape of a credential row; never verified here. */
const PASSWORD_HASH = "$argon2id$v=19$m=19456,t=2,p=1$c2NhbGUtYmVuY2gtc2FsdA$Gq2Wc1y2eBq6dC0m0N3n3b2xZ4dY6iVfQb8hQ7m5uN0";

const sqlArray = (items: string[]) => `array[${items.map((s) => `'${s.replace(/'/g, "''")}'`).join(",")}]`;

/** The email of user i, as the seed wrote it. */
export function seededEmail(i: number): string {
  const first = FIRST_NAMES[i % FIRST_NAMES.length]!.toLowerCase();
  const last = LAST_NAMES[Math.floor(i / FIRST_NAMES.length) % LAST_NAMES.length]!.toLowerCase();
  return `${first}.${last}${i}@${DOMAINS[i % DOMAINS.length]}`;
}

/** Raw token of seeded session j: 43 characters, the length of a real one (32 random bytes, base64url). */
export const seededToken = (j: number) => `scale-session-${String(j).padStart(29, "0")}`;

/** The user of session j: 1 + (j mod users), or the one before when that user is banned (a ban revokes sessions). */
const sessionUser = (users: number) => `(case when (1 + j % ${users}) % 500 = 0 then j % ${users} else 1 + j % ${users} end)`;

export interface SeedOptions {
  users: number;
  sessions: number;
  /** Rows per INSERT statement (progress is reported per chunk). */
  chunk?: number;
  log?: (line: string) => void;
}

async function timedMs(fn: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await fn();
  return performance.now() - started;
}

async function chunked(client: pg.Client, label: string, total: number, chunk: number, sql: string, log: (l: string) => void) {
  const started = performance.now();
  for (let from = 1; from <= total; from += chunk) {
    const to = Math.min(total, from + chunk - 1);
    await client.query(sql, [from, to]);
    log(`  ${label}: ${to.toLocaleString("en")} / ${total.toLocaleString("en")} (${((performance.now() - started) / 1000).toFixed(1)} s)`);
  }
}

/** Users, their credential accounts and live sessions; then VACUUM ANALYZE, as autovacuum would. */
export async function seed(client: pg.Client, opts: SeedOptions): Promise<{ seconds: number }> {
  const log = opts.log ?? (() => {});
  const chunk = opts.chunk ?? 500_000;
  const started = performance.now();
  const first = sqlArray(FIRST_NAMES);
  const last = sqlArray(LAST_NAMES);
  const domains = sqlArray(DOMAINS);
  const fn = `(${first})[1 + i % ${FIRST_NAMES.length}]`;
  const ln = `(${last})[1 + (i / ${FIRST_NAMES.length}) % ${LAST_NAMES.length}]`;
  // GIN indexes take rows one at a time (fastupdate off): dropped for the bulk load and built
  // again after, from their own definitions (a sort-based build, seconds instead of minutes).
  const gin = await client.query<{ name: string; definition: string; statistics: number }>(
    `select c.relname as name, pg_get_indexdef(c.oid) as definition,
            coalesce((select a.attstattarget from pg_attribute a where a.attrelid = c.oid and a.attnum = 1), -1) as statistics
     from pg_index i join pg_class c on c.oid = i.indexrelid join pg_am am on am.oid = c.relam
     where i.indrelid = 'users'::regclass and am.amname = 'gin'`,
  );
  for (const { name } of gin.rows) await client.query(`drop index "${name}"`);
  await chunked(
    client,
    "users",
    opts.users,
    chunk,
    `insert into users (id, email, email_verified, name, role, banned, two_factor_enabled, created_at, updated_at)
     select md5('user-' || i)::uuid,
            lower(${fn}) || '.' || lower(${ln}) || i || '@' || (${domains})[1 + i % ${DOMAINS.length}],
            i % 4 <> 0,
            ${fn} || ' ' || ${ln},
            case when i % 1000 = 0 then 'admin' else 'user' end,
            i % 500 = 0,
            false,
            timestamptz '${SEED_EPOCH}' + i * interval '1 second',
            timestamptz '${SEED_EPOCH}' + i * interval '1 second'
     from generate_series($1::int, $2::int) i`,
    log,
  );
  await client.query("set maintenance_work_mem = '256MB'");
  for (const { name, definition, statistics } of gin.rows) {
    const built = await timedMs(() => client.query(definition));
    // The migration's statistics target of the index expression, which the definition leaves out.
    if (statistics >= 0) await client.query(`alter index "${name}" alter column 1 set statistics ${Number(statistics)}`);
    log(`  ${name} built in ${(built / 1000).toFixed(1)} s`);
  }
  await chunked(
    client,
    "credential accounts",
    opts.users,
    chunk,
    `insert into accounts (id, user_id, provider_id, account_id, password, created_at, updated_at)
     select md5('account-' || i)::uuid, md5('user-' || i)::uuid, 'credential', md5('user-' || i)::uuid::text, '${PASSWORD_HASH}',
            timestamptz '${SEED_EPOCH}' + i * interval '1 second', timestamptz '${SEED_EPOCH}' + i * interval '1 second'
     from generate_series($1::int, $2::int) i`,
    log,
  );
  await chunked(
    client,
    "sessions",
    opts.sessions,
    chunk,
    `insert into sessions (id, token_hash, user_id, expires_at, remember_me, ip_address, user_agent, created_at, updated_at)
     select md5('session-' || j)::uuid, encode(sha256(convert_to('scale-session-' || lpad(j::text, 29, '0'), 'UTF8')), 'hex'),
            md5('user-' || ${sessionUser(opts.users)})::uuid, now() + interval '7 days', true, '203.0.113.' || (j % 250),
            'Mozilla/5.0 (X11; Linux x86_64) scale-bench', now() - interval '1 hour', now() - interval '1 hour'
     from generate_series($1::int, $2::int) j`,
    log,
  );
  for (const table of ["users", "accounts", "sessions"]) await client.query(`vacuum (analyze) ${table}`);
  return { seconds: (performance.now() - started) / 1000 };
}

/** `count` sessions that expired an hour ago, for the sweeper (raw tokens `scale-expired-<j, 29 digits>`). */
export async function seedExpiredSessions(client: pg.Client, count: number, users: number, log: (l: string) => void = () => {}) {
  await chunked(
    client,
    "expired sessions",
    count,
    500_000,
    `insert into sessions (id, token_hash, user_id, expires_at, remember_me, created_at, updated_at)
     select md5('expired-' || j)::uuid, encode(sha256(convert_to('scale-expired-' || lpad(j::text, 29, '0'), 'UTF8')), 'hex'),
            md5('user-' || (1 + j % ${users}))::uuid, now() - interval '1 hour', true, now() - interval '8 days', now() - interval '8 days'
     from generate_series($1::int, $2::int) j`,
    log,
  );
  await client.query("analyze sessions");
}
