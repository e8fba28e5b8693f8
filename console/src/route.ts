import { useEffect, useState } from "react";

/** The console lives under /admin; its pages are client routes (the service answers index.html for them). */
export const BASE = "/admin";

export interface Location {
  /** Path below /admin, always starting with "/" (e.g. "/users/abc"). */
  path: string;
  query: URLSearchParams;
}

function current(): Location {
  const { pathname, search } = window.location;
  const below = pathname.startsWith(BASE) ? pathname.slice(BASE.length) : pathname;
  return { path: below === "" ? "/" : below, query: new URLSearchParams(search) };
}

const listeners = new Set<() => void>();

/** Goes to a console path ("/users?offset=25"); `replace` keeps the history entry (filter changes). */
export function navigate(to: string, options: { replace?: boolean } = {}): void {
  const url = `${BASE}${to}`;
  if (options.replace) window.history.replaceState(null, "", url);
  else window.history.pushState(null, "", url);
  for (const listener of listeners) listener();
}

export function useLocation(): Location {
  const [location, setLocation] = useState(current);
  useEffect(() => {
    const update = () => setLocation(current());
    listeners.add(update);
    window.addEventListener("popstate", update);
    return () => {
      listeners.delete(update);
      window.removeEventListener("popstate", update);
    };
  }, []);
  return location;
}

/** A query string from the set values only ("" when none). */
export function queryString(values: Record<string, string | number | undefined>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(values)) if (value !== undefined && value !== "") params.set(key, String(value));
  const text = params.toString();
  return text ? `?${text}` : "";
}
