import { describe, expect, it } from "vitest";
import { acceptedLocales } from "./locale.ts";

describe("Accept-Language (RFC 9110 §12.5.4)", () => {
  it("orders by q, ties in the order written; drops q=0, * and malformed ranges", () => {
    expect(acceptedLocales("fr-CH, fr;q=0.9, en;q=0.8, de;q=0.7, *;q=0.5")).toEqual(["fr-CH", "fr", "en", "de"]);
    expect(acceptedLocales("it;q=0.3, de-AT;q=0.8, en;q=0, pt-BR")).toEqual(["pt-BR", "de-AT", "it"]);
    expect(acceptedLocales("en;q=2, <script>, de;q=abc, es;Q=0.5, ,")).toEqual(["es"]);
    expect(acceptedLocales("")).toEqual([]);
    expect(acceptedLocales(undefined)).toEqual([]);
  });

  it("is bounded: a huge header costs at most 20 ranges", () => {
    const header = Array.from({ length: 5000 }, (_, i) => `x${String.fromCharCode(97 + (i % 26))}`).join(",");
    expect(acceptedLocales(header).length).toBeLessThanOrEqual(20);
  });
});
