/**
 * ServiceAccount tokens shaped as kube-apiserver issues them: JWTs whose claims name the
 * issuer, audiences and lifetime, and under `kubernetes.io` the ServiceAccount and what
 * the token is bound to, so a client that decodes one reads what it would read from a
 * real cluster. LocalCluster recognises its tokens by their text: the signature (ES256,
 * by a key of the server's own) makes a well-formed JWT, nobody verifies it here.
 */
import { createHash, generateKeyPairSync, type KeyObject, sign } from "node:crypto"

/** The issuer (`--service-account-issuer`) kubeadm and kind configure. */
export const TOKEN_ISSUER = "https://kubernetes.default.svc.cluster.local"

/** A name and uid, as the `kubernetes.io` claim refers to an object. */
export interface ObjectRef {
  readonly name: string
  readonly uid?: string
}

/** What a token says of itself. */
export interface TokenClaims {
  readonly namespace: string
  readonly serviceAccount: ObjectRef
  readonly pod?: ObjectRef
  /** The Pod's node, when it names one: by name alone when no Node object has it, as here. */
  readonly node?: ObjectRef
  readonly audiences: ReadonlyArray<string>
  /** `iat` and `nbf`, epoch seconds. */
  readonly issuedAt: number
  /** `exp`, epoch seconds. */
  readonly expiresAt: number
  /** `jti`: a UUID naming this token, which its user carries as the credential's id. */
  readonly id: string
}

const base64url = (value: unknown): string => Buffer.from(JSON.stringify(value), "utf8").toString("base64url")

/** Signs tokens with a key made on first use; one per server, as each API server has its own. */
export const makeTokenSigner = () => {
  let key: { readonly privateKey: KeyObject; readonly kid: string } | undefined
  const signingKey = () => {
    if (key === undefined) {
      const pair = generateKeyPairSync("ec", { namedCurve: "P-256" })
      // The key id is the base64url SHA-256 of the public key's DER, as the server derives it.
      const kid = createHash("sha256").update(pair.publicKey.export({ type: "spki", format: "der" })).digest(
        "base64url"
      )
      key = { privateKey: pair.privateKey, kid }
    }
    return key
  }
  return (claims: TokenClaims): string => {
    const { kid, privateKey } = signingKey()
    // The claims in the order the server's JWT library writes them: sorted by name.
    const payload = {
      aud: claims.audiences,
      exp: claims.expiresAt,
      iat: claims.issuedAt,
      iss: TOKEN_ISSUER,
      jti: claims.id,
      "kubernetes.io": {
        namespace: claims.namespace,
        ...(claims.node !== undefined ? { node: claims.node } : {}),
        ...(claims.pod !== undefined ? { pod: claims.pod } : {}),
        serviceaccount: claims.serviceAccount
      },
      nbf: claims.issuedAt,
      sub: `system:serviceaccount:${claims.namespace}:${claims.serviceAccount.name}`
    }
    const signed = `${base64url({ alg: "ES256", kid })}.${base64url(payload)}`
    const signature = sign("sha256", Buffer.from(signed, "utf8"), { key: privateKey, dsaEncoding: "ieee-p1363" })
    return `${signed}.${signature.toString("base64url")}`
  }
}
