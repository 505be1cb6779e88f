/**
 * The supervisor's own client of the API server: HTTPS with the admin certificate, for the
 * objects it sets up (CRDs, Node, classes, Gateway) and the conditions it waits on. Kept
 * apart from the library on purpose: the cluster that judges the library must not depend
 * on it to start.
 */
import { Duration, Effect } from "effect"
import { readFile } from "node:fs/promises"
import { request } from "node:https"
import { ControlPlaneError } from "./ControlPlaneError.js"

export interface AdminApi {
  readonly server: string
  /** One request; any answer is a success here, with its status and body. */
  readonly call: (
    method: string,
    path: string,
    body?: { readonly text: string; readonly contentType: string }
  ) => Effect.Effect<{ readonly status: number; readonly body: string }, ControlPlaneError>
  /** The object at `path`, or undefined on 404. */
  readonly get: (path: string) => Effect.Effect<Record<string, any> | undefined, ControlPlaneError>
  /** Server-side applies `object` at `path`, as the control plane's field manager, forcing conflicts. */
  readonly apply: (path: string, object: object) => Effect.Effect<void, ControlPlaneError>
}

const CALL_TIMEOUT = Duration.seconds(10)

export const makeAdminApi = (
  server: string,
  pki: { readonly caCert: string; readonly adminCert: string; readonly adminKey: string }
): Effect.Effect<AdminApi> =>
  Effect.gen(function*() {
    const [ca, cert, key] = yield* Effect.promise(() =>
      Promise.all([readFile(pki.caCert), readFile(pki.adminCert), readFile(pki.adminKey)])
    )
    const call: AdminApi["call"] = (method, path, body) =>
      Effect.async((resume) => {
        const req = request(new URL(path, server), {
          method,
          ca,
          cert,
          key,
          timeout: Duration.toMillis(CALL_TIMEOUT),
          headers: { accept: "application/json", ...(body !== undefined ? { "content-type": body.contentType } : {}) }
        }, (res) => {
          const chunks: Array<Buffer> = []
          res.on("data", (chunk: Buffer) => chunks.push(chunk))
          res.on(
            "end",
            () => resume(Effect.succeed({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }))
          )
          res.on(
            "error",
            (error) => resume(Effect.fail(new ControlPlaneError({ message: `${method} ${path}: ${error.message}` })))
          )
        })
        req.on("timeout", () => req.destroy(new Error(`no answer within ${Duration.format(CALL_TIMEOUT)}`)))
        req.on(
          "error",
          (error) => resume(Effect.fail(new ControlPlaneError({ message: `${method} ${path}: ${error.message}` })))
        )
        req.end(body?.text)
        return Effect.sync(() => req.destroy())
      })
    const refused = (method: string, path: string, answer: { readonly status: number; readonly body: string }) =>
      new ControlPlaneError({ message: `${method} ${path} answered ${answer.status}: ${answer.body.slice(0, 500)}` })
    return {
      server,
      call,
      get: (path) =>
        Effect.flatMap(call("GET", path), (answer) =>
          answer.status === 404
            ? Effect.succeed(undefined)
            : answer.status === 200
            ? Effect.succeed(JSON.parse(answer.body) as Record<string, any>)
            : Effect.fail(refused("GET", path, answer))),
      apply: (path, object) =>
        Effect.flatMap(
          call("PATCH", `${path}?fieldManager=session-routing-control-plane&force=true`, {
            text: JSON.stringify(object),
            contentType: "application/apply-patch+yaml"
          }),
          (answer) => (answer.status < 300 ? Effect.void : Effect.fail(refused("PATCH", path, answer)))
        )
    }
  })
