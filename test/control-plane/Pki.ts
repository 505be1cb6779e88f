/**
 * The real control plane's certificates, made with openssl as kubeadm lays them out: a CA,
 * the API server's serving certificate for 127.0.0.1, an admin client certificate in
 * `system:masters` (how the API server reads a client certificate: CN the user, O its
 * groups), and the key pair that signs ServiceAccount tokens.
 */
import { Duration, Effect } from "effect"
import { execFile } from "node:child_process"
import { mkdir, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { ControlPlaneError } from "./ControlPlaneError.js"

export interface ControlPlanePki {
  readonly caCert: string
  readonly caKey: string
  readonly servingCert: string
  readonly servingKey: string
  readonly adminCert: string
  readonly adminKey: string
  /** Signs ServiceAccount tokens (kube-apiserver) and is handed to the token controller. */
  readonly serviceAccountKey: string
  readonly serviceAccountPublicKey: string
}

const OPENSSL_TIMEOUT = Duration.seconds(30)

const openssl = (args: ReadonlyArray<string>) =>
  Effect.async<void, ControlPlaneError>((resume) => {
    const child = execFile(
      "openssl",
      [...args],
      { timeout: Duration.toMillis(OPENSSL_TIMEOUT) },
      (error, _, stderr) => {
        if (error === null) return resume(Effect.void)
        const missing = (error as NodeJS.ErrnoException).code === "ENOENT"
        resume(Effect.fail(
          new ControlPlaneError({
            message: missing
              ? "the certificates need openssl on the PATH (Debian: apt-get install openssl)"
              : `openssl ${args[0]} failed: ${stderr.trim() || error.message}`
          })
        ))
      }
    )
    return Effect.sync(() => child.kill("SIGKILL"))
  })

/** A key and a certificate signed by the CA, with the extensions in `extensions` (openssl's syntax). */
const signed = (dir: string, name: string, subject: string, extensions: string) =>
  Effect.gen(function*() {
    const key = join(dir, `${name}.key`)
    const csr = join(dir, `${name}.csr`)
    const cert = join(dir, `${name}.crt`)
    const ext = join(dir, `${name}.ext`)
    yield* Effect.promise(() => writeFile(ext, extensions))
    yield* openssl(["req", "-new", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", csr, "-subj", subject])
    yield* openssl([
      "x509",
      "-req",
      "-in",
      csr,
      "-CA",
      join(dir, "ca.crt"),
      "-CAkey",
      join(dir, "ca.key"),
      "-CAcreateserial",
      "-days",
      "30",
      "-sha256",
      "-extfile",
      ext,
      "-out",
      cert
    ])
    return { key, cert }
  })

/** Makes every certificate and key under `dir/pki`. */
export const makePki = (dir: string): Effect.Effect<ControlPlanePki, ControlPlaneError> =>
  Effect.gen(function*() {
    const pki = join(dir, "pki")
    yield* Effect.promise(() => mkdir(pki, { recursive: true }))
    yield* openssl([
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-keyout",
      join(pki, "ca.key"),
      "-out",
      join(pki, "ca.crt"),
      "-days",
      "30",
      "-subj",
      "/CN=session-routing-control-plane-ca"
    ])
    const serving = yield* signed(
      pki,
      "apiserver",
      "/CN=kube-apiserver",
      [
        // The in-cluster names too, as kubeadm issues them, though only 127.0.0.1 is dialled here.
        "subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,IP:10.96.0.1",
        "extendedKeyUsage=serverAuth",
        "keyUsage=critical,digitalSignature,keyEncipherment"
      ].join("\n")
    )
    const admin = yield* signed(
      pki,
      "admin",
      "/O=system:masters/CN=kubernetes-admin",
      "extendedKeyUsage=clientAuth\nkeyUsage=critical,digitalSignature,keyEncipherment"
    )
    const serviceAccountKey = join(pki, "sa.key")
    const serviceAccountPublicKey = join(pki, "sa.pub")
    yield* openssl(["genrsa", "-out", serviceAccountKey, "2048"])
    yield* openssl(["rsa", "-in", serviceAccountKey, "-pubout", "-out", serviceAccountPublicKey])
    return {
      caCert: join(pki, "ca.crt"),
      caKey: join(pki, "ca.key"),
      servingCert: serving.cert,
      servingKey: serving.key,
      adminCert: admin.cert,
      adminKey: admin.key,
      serviceAccountKey,
      serviceAccountPublicKey
    }
  })
