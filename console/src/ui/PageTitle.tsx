import { useEffect, useRef, type ReactNode } from "react";

/** The page's h1: the tab title follows it, and focus moves to it when the page opens (keyboard and screen readers start there). */
export function PageTitle({ children, text }: { children: ReactNode; text?: string }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${text ?? heading.current?.textContent ?? ""} · Portcullis admin`;
    heading.current?.focus({ preventScroll: true });
  }, [text]);
  return (
    <h1 tabIndex={-1} ref={heading}>
      {children}
    </h1>
  );
}
