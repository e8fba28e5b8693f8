/**
 * A user's membership of an organization as has-permission reads it (docs/organizations.md
 * "Roles", docs/performance.md): one lookup on the unique (organization_id, user_id) index,
 * prepared once, outside any transaction. `$1, $2` / `?, ?` appended by the driver.
 */
export const MEMBERSHIP_LOOKUP = "SELECT id, role, created_at FROM members WHERE organization_id = ";

export interface MembershipRow {
  id: string;
  role: string;
  createdAt: Date;
}

export interface MembershipLookup {
  /** The membership, or null; the caller has checked that `organizationId` is a UUID. SQLite answers at once (types.ts MaybePromise). */
  findMembership(organizationId: string, userId: string): MembershipRow | null | Promise<MembershipRow | null>;
}

export function mapMembershipRow(r: readonly unknown[], date: (v: unknown) => Date): MembershipRow {
  return { id: r[0] as string, role: r[1] as string, createdAt: date(r[2]) };
}
