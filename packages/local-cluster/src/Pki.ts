/**
 * LocalCluster's certificates, made at start as kubeadm makes a cluster's: a CA, a
 * serving certificate for 127.0.0.1 signed by it, and client certificates whose
 * subject names the user (CN) and its groups (O), which is how the API server reads them.
 */
import { Clock, Effect } from "effect"
import type forge from "node-forge"
import { generateKeyPair, randomBytes } from "node:crypto"

/** A certificate and its private key, PEM. */
export interface KeyPair {
  readonly cert: string
  readonly key: string
}

/** A CA that signs serving and client certificates for as long as the cluster runs. */
export interface CertificateAuthority {
  /** The CA certificate, PEM: what a kubeconfig's `certificate-authority-data` carries. */
  readonly cert: string
  /** A serving certificate for `127.0.0.1` and `localhost`. */
  readonly serving: Effect.Effect<KeyPair>
  /** A client certificate for `user` in `groups`. */
  readonly client: (user: string, groups?: ReadonlyArray<string>) => Effect.Effect<KeyPair>
}

/** A year, as kubeadm's leaf certificates; the CA gets ten. */
const DAY_MS = 86_400_000
const LEAF_DAYS = 365
const CA_DAYS = 3650

// Node makes the keys (natively, off the event loop); forge only signs.
const rsaKey = Effect.async<{ readonly publicKey: string; readonly privateKey: string }>((resume) => {
  generateKeyPair(
    "rsa",
    {
      modulusLength: 2048,
      publicKeyEncoding: { type: "spki", format: "pem" },
      privateKeyEncoding: { type: "pkcs8", format: "pem" }
    },
    (
      error,
      publicKey,
      privateKey
    ) => (error === null ? resume(Effect.succeed({ publicKey, privateKey })) : resume(Effect.die(error)))
  )
})

// Each CA gets a key of its own; leaf certificates share one key per process. A 2048-bit
// key costs 100 ms to 1 s on a busy machine, and a test cluster issues several, while
// which key a leaf holds changes nothing a client or the server checks.
let leafKey: Promise<{ readonly publicKey: string; readonly privateKey: string }> | undefined
const sharedLeafKey = Effect.suspend(() => {
  leafKey ??= Effect.runPromise(rsaKey)
  const pending = leafKey
  return Effect.promise(() => pending)
})

/**
 * Random and positive, as RFC 5280 asks of serial numbers, in whole bytes whose first
 * is 0x01 to 0x7f: forge writes the hex as given, and an odd length or a leading 0x00
 * before a byte under 0x80 is DER that OpenSSL refuses ("illegal padding").
 */
export const nextSerial = (): string => {
  const bytes = randomBytes(16)
  bytes[0] = (bytes[0]! & 0x7f) || 0x01
  return bytes.toString("hex")
}

interface Issue {
  readonly subject: ReadonlyArray<forge.pki.CertificateField>
  readonly days: number
  readonly extensions: ReadonlyArray<object>
  readonly publicKey: string
  /** The signer; unset: self-signed. */
  readonly issuer?: { readonly cert: forge.pki.Certificate; readonly key: forge.pki.rsa.PrivateKey }
  readonly selfKey: string
}

type Forge = typeof forge

/** node-forge, loaded when a cluster first makes certificates: only a secured cluster needs it. */
const loadForge: Effect.Effect<Forge> = Effect.promise(() => import("node-forge").then((module) => module.default))

const issue = (forge: Forge, now: number, spec: Issue): forge.pki.Certificate => {
  const cert = forge.pki.createCertificate()
  cert.publicKey = forge.pki.publicKeyFromPem(spec.publicKey)
  cert.serialNumber = nextSerial()
  // A minute back, so a client whose clock is a little behind still accepts it.
  cert.validity.notBefore = new Date(now - 60_000)
  cert.validity.notAfter = new Date(now + spec.days * DAY_MS)
  cert.setSubject([...spec.subject])
  cert.setIssuer(spec.issuer?.cert.subject.attributes ?? [...spec.subject])
  cert.setExtensions([...spec.extensions])
  cert.sign(spec.issuer?.key ?? forge.pki.privateKeyFromPem(spec.selfKey), forge.md.sha256.create())
  return cert
}

/** Makes a CA: its own key and a self-signed certificate. */
export const makeCertificateAuthority = (name = "local-cluster-ca"): Effect.Effect<CertificateAuthority> =>
  Effect.gen(function*() {
    const forge = yield* loadForge
    const now = yield* Clock.currentTimeMillis
    const keys = yield* rsaKey
    const caCert = issue(forge, now, {
      subject: [{ name: "commonName", value: name }],
      days: CA_DAYS,
      extensions: [
        { name: "basicConstraints", cA: true, critical: true },
        { name: "keyUsage", keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true }
      ],
      publicKey: keys.publicKey,
      selfKey: keys.privateKey
    })
    const issuer = { cert: caCert, key: forge.pki.privateKeyFromPem(keys.privateKey) }
    const leaf = (subject: ReadonlyArray<forge.pki.CertificateField>, extensions: ReadonlyArray<object>) =>
      Effect.gen(function*() {
        const at = yield* Clock.currentTimeMillis
        const pair = yield* sharedLeafKey
        const cert = issue(forge, at, {
          subject,
          days: LEAF_DAYS,
          extensions,
          publicKey: pair.publicKey,
          issuer,
          selfKey: pair.privateKey
        })
        return { cert: forge.pki.certificateToPem(cert), key: pair.privateKey }
      })
    return {
      cert: forge.pki.certificateToPem(caCert),
      serving: leaf([{ name: "commonName", value: "kube-apiserver" }], [
        { name: "basicConstraints", cA: false },
        { name: "keyUsage", digitalSignature: true, keyEncipherment: true, critical: true },
        { name: "extKeyUsage", serverAuth: true },
        { name: "subjectAltName", altNames: [{ type: 7, ip: "127.0.0.1" }, { type: 2, value: "localhost" }] }
      ]),
      client: (user, groups = []) =>
        leaf(
          [...groups.map((group) => ({ name: "organizationName", value: group })), { name: "commonName", value: user }],
          [
            { name: "basicConstraints", cA: false },
            { name: "keyUsage", digitalSignature: true, keyEncipherment: true, critical: true },
            { name: "extKeyUsage", clientAuth: true }
          ]
        )
    }
  })
