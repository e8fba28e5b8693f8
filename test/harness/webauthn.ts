import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from "node:crypto";
import { isoCBOR } from "@simplewebauthn/server/helpers";

type Cbor = Parameters<typeof isoCBOR.encode>[0];

/**
 * A software authenticator for Node tests (the fake at the edge, like test/harness/oidc.ts): one
 * ES256 credential, "none" attestation (W3C WebAuthn L3 §8.7), authenticator data per §6.1 and
 * assertion signatures per §6.3.3. It does what the test says, including what a real
 * authenticator would refuse (ignoring excludeCredentials, signing for a foreign origin).
 */
const b64url = (b: Uint8Array) => Buffer.from(b).toString("base64url");
const sha256 = (b: Uint8Array | string) => createHash("sha256").update(b).digest();

/** §6.1 flags: UP (user present), UV (user verified), AT (attested credential data). */
const UP = 0x01;
const UV = 0x04;
const AT = 0x40;

export interface CreationOptions {
  challenge: string;
  rp: { id?: string };
}
export interface RequestOptions {
  challenge: string;
  rpId?: string;
}

export class SoftAuthenticator {
  readonly credentialId: Buffer;
  readonly userHandle = b64url(randomBytes(16));
  signCount: number;
  private readonly counting: boolean;
  private readonly privateKey: KeyObject;
  private readonly cose: Uint8Array;

  /** `signCount` null: an authenticator without a counter (always 0, §6.1.1). */
  constructor(
    private readonly origin: string,
    opts: { signCount?: number | null; from?: SoftAuthenticator } = {},
  ) {
    const from = opts.from;
    const pair = from ? null : generateKeyPairSync("ec", { namedCurve: "P-256" });
    this.privateKey = from ? from.privateKey : pair!.privateKey;
    this.credentialId = from ? from.credentialId : randomBytes(32);
    this.cose = from ? from.cose : coseKey(pair!.publicKey);
    this.counting = opts.signCount !== null;
    this.signCount = opts.signCount ?? 0;
  }

  get id(): string {
    return b64url(this.credentialId);
  }

  /** A copy of the credential, private key included, with its own counter (a cloned authenticator). */
  clone(signCount: number): SoftAuthenticator {
    return new SoftAuthenticator(this.origin, { signCount, from: this });
  }

  /** navigator.credentials.create() answered, as JSON (L3 §5.1.3 RegistrationResponseJSON). */
  register(options: CreationOptions, overrides: { origin?: string; rpId?: string } = {}) {
    const rpId = overrides.rpId ?? options.rp.id!;
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(this.credentialId.length);
    const authData = Buffer.concat([sha256(rpId), Buffer.from([UP | UV | AT]), this.counter(), Buffer.alloc(16), idLength, this.credentialId, this.cose]);
    const attestationObject = isoCBOR.encode(new Map<string, Cbor>([["fmt", "none"], ["attStmt", new Map()], ["authData", new Uint8Array(authData)]]));
    return {
      id: this.id,
      rawId: this.id,
      type: "public-key",
      authenticatorAttachment: "platform",
      response: {
        clientDataJSON: this.clientData("webauthn.create", options.challenge, overrides.origin),
        attestationObject: b64url(attestationObject),
        transports: ["internal"],
      },
    };
  }

  /** navigator.credentials.get() answered (L3 §5.1.4 AuthenticationResponseJSON); the counter moves first. */
  assert(options: RequestOptions, overrides: { origin?: string; id?: string } = {}) {
    if (this.counting) this.signCount += 1;
    const authData = Buffer.concat([sha256(options.rpId!), Buffer.from([UP | UV]), this.counter()]);
    const clientDataJSON = this.clientData("webauthn.get", options.challenge, overrides.origin);
    const signature = sign("sha256", Buffer.concat([authData, sha256(Buffer.from(clientDataJSON, "base64url"))]), this.privateKey);
    const id = overrides.id ?? this.id;
    return {
      id,
      rawId: id,
      type: "public-key",
      authenticatorAttachment: "platform",
      response: { clientDataJSON, authenticatorData: b64url(authData), signature: b64url(signature), userHandle: this.userHandle },
    };
  }

  private counter(): Buffer {
    const b = Buffer.alloc(4);
    b.writeUInt32BE(this.signCount);
    return b;
  }

  private clientData(type: string, challenge: string, origin = this.origin): string {
    return Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false })).toString("base64url");
  }
}

/** RFC 9053 §7.1.1 EC2 key, ES256 (COSE alg -7), P-256 (crv 1). */
function coseKey(publicKey: KeyObject): Uint8Array {
  const jwk = publicKey.export({ format: "jwk" });
  const key = new Map<number, Cbor>([
    [1, 2],
    [3, -7],
    [-1, 1],
    [-2, new Uint8Array(Buffer.from(jwk.x!, "base64url"))],
    [-3, new Uint8Array(Buffer.from(jwk.y!, "base64url"))],
  ]);
  return isoCBOR.encode(key);
}
