import { hash } from "@node-rs/argon2";
import { describe, expect, it } from "vitest";
import { argon2Refusal } from "./convert.ts";

describe("argon2Refusal: what an imported argon2 hash may cost", () => {
  it("takes ours and the bounds themselves, in each argon2 variant, with or without a version", async () => {
    expect(argon2Refusal(await hash("pw", { algorithm: 2, memoryCost: 19456, timeCost: 2, parallelism: 1 }))).toBeNull();
    expect(argon2Refusal("$argon2id$v=19$m=65536,t=10,p=4$c2FsdHNhbHQ$aGFzaGhhc2hoYXNo")).toBeNull();
    expect(argon2Refusal("$argon2i$m=4096,t=3,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNo")).toBeNull();
    expect(argon2Refusal("$argon2d$v=16$m=4096,t=3,p=1,keyid=x$c2FsdHNhbHQ$aGFzaGhhc2hoYXNo")).toBeNull();
  });

  it("refuses each parameter one above its bound, and what it cannot read", () => {
    for (const params of ["m=65537,t=2,p=1", "m=19456,t=11,p=1", "m=19456,t=2,p=5", "m=99999999999,t=1,p=1"]) {
      expect(argon2Refusal(`$argon2id$v=19$${params}$c2FsdHNhbHQ$aGFzaGhhc2hoYXNo`), params).toMatch(/^argon2 (cost above the import's bounds|hash not in the PHC form)/);
    }
    expect(argon2Refusal("$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ")).toMatch(/not in the PHC form/);
    expect(argon2Refusal("$argon2id$v=19$t=2,m=19456,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNo")).toMatch(/not in the PHC form/);
  });
});
