import type { MouseEvent, ReactNode } from "react";
import { BASE, navigate } from "../route.ts";

/** A real link (keyboard, middle-click, copy address) that moves within the console without a reload. */
export function Link({ to, children, className }: { to: string; children: ReactNode; className?: string }) {
  function onClick(event: MouseEvent<HTMLAnchorElement>) {
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(to);
  }
  return (
    <a href={`${BASE}${to}`} onClick={onClick} className={className}>
      {children}
    </a>
  );
}
