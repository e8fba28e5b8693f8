import { createContext, useContext, type ReactNode } from "react";
import type { SessionWithUser } from "../api.ts";
import type { Permission } from "./permissions.ts";

/** The signed-in admin, what their roles grant, and a way to re-read both (after sign-out, impersonation). */
export interface ConsoleSession {
  me: SessionWithUser;
  can(permission: Permission): boolean;
  refresh(): void;
}

const Context = createContext<ConsoleSession | null>(null);

export function SessionProvider({ value, children }: { value: ConsoleSession; children: ReactNode }) {
  return <Context.Provider value={value}>{children}</Context.Provider>;
}

export function useSession(): ConsoleSession {
  const session = useContext(Context);
  if (!session) throw new Error("useSession outside SessionProvider");
  return session;
}

/** Renders its children only when the admin's roles grant the permission. */
export function Allowed({ to, children }: { to: Permission; children: ReactNode }) {
  return useSession().can(to) ? <>{children}</> : null;
}
