/**
 * How the HTTP API answers: a reply, the API server's `Status` failures, and the
 * reading of request bodies and options that refuses what the real server refuses.
 */
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import type { IncomingMessage, ServerResponse } from "node:http"
import type { KubeObject, Status } from "session-routing/kubernetes"
import { parse as parseYaml } from "yaml"
import type { Faults } from "../Faults.js"

/** The API server refuses request bodies above 3 MiB. */
const MAX_BODY_BYTES = 3 * 1024 * 1024

export interface Reply {
  readonly code: number
  readonly contentType: string
  readonly body: string | Uint8Array
  readonly headers?: Readonly<Record<string, string>>
}

export const json = (code: number, value: unknown, headers?: Record<string, string>): Reply => ({
  code,
  contentType: "application/json",
  body: JSON.stringify(value),
  ...(headers !== undefined ? { headers } : {})
})

/** Go's http.NotFound: what a path no handler serves answers. */
export const pageNotFound: Reply = {
  code: 404,
  contentType: "text/plain; charset=utf-8",
  body: "404 page not found\n",
  headers: { "x-content-type-options": "nosniff" }
}

/**
 * go-restful's 404, as kube-apiserver words it (`NewGenericServerResponse`): a path under
 * `/api` or a built-in group that no route takes, a type the group version does not
 * have or a version the group does not serve. The Status names nothing.
 */
export const restfulNotFound = (): Status =>
  failure(404, "NotFound", "the server could not find the requested resource", {})

/**
 * go-restful's 415, for a PATCH to a built-in type in a media type its route does not
 * consume: refused before any handler, so not the handler's list of patch types.
 */
export const restfulUnsupportedMediaType = (): Status =>
  failure(415, "UnsupportedMediaType", "415: Unsupported Media Type", {})

export const statusReply = (status: Status, headers?: Record<string, string>): Reply =>
  json(status.code, status, headers)

export const failure = (code: number, reason: string, message: string, details?: Status["details"]): Status => ({
  kind: "Status",
  apiVersion: "v1",
  metadata: {},
  status: "Failure",
  message,
  reason,
  ...(details !== undefined ? { details } : {}),
  code
})

export const badRequest = (message: string): Status => failure(400, "BadRequest", message)

export const methodNotAllowed = (): Status =>
  failure(405, "MethodNotAllowed", "the server does not allow this method on the requested resource", {})

export const unsupportedMediaType = (accepted: ReadonlyArray<string>): Status =>
  failure(
    415,
    "UnsupportedMediaType",
    `the body of the request was in an unknown format - accepted media types include: ${accepted.join(", ")}`
  )

export const invalidOptions = (kind: string, field: string, reason: string, message: string): Status =>
  failure(422, "Invalid", `${kind}.meta.k8s.io "" is invalid: ${field}: ${message}`, {
    group: "meta.k8s.io",
    kind,
    causes: [{ reason, message, field }]
  })

// Thrown while reading a request; answered as its Status.
export class Refused {
  constructor(readonly status: Status) {}
}

export const readBody = (req: IncomingMessage): Effect.Effect<Buffer, Status> =>
  Effect.async<Buffer, Status>((resume) => {
    const chunks: Array<Buffer> = []
    let size = 0
    let done = false
    req.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (size > MAX_BODY_BYTES && !done) {
        done = true
        resume(
          Effect.fail(failure(413, "RequestEntityTooLarge", `Request entity too large: limit is ${MAX_BODY_BYTES}`))
        )
        return
      }
      chunks.push(chunk)
    })
    req.on("end", () => {
      if (!done) {
        done = true
        resume(Effect.succeed(Buffer.concat(chunks)))
      }
    })
    req.on("error", () => {
      if (!done) {
        done = true
        resume(Effect.fail(badRequest("the request body could not be read")))
      }
    })
  })

export const mediaType = (req: IncomingMessage): string =>
  (req.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase()

export const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch (e) {
    throw new Refused(
      badRequest(`couldn't get version/kind; json parse error: ${e instanceof Error ? e.message : String(e)}`)
    )
  }
}

export const parseYamlOrJson = (text: string): unknown => {
  // JSON is YAML, and nearly every client (client-go, client-node, kubectl
  // --server-side) sends apply patches as JSON: read those as JSON, far cheaper than
  // the YAML parser; anything JSON refuses still gets YAML's say.
  if (text.trimStart().startsWith("{")) {
    try {
      return JSON.parse(text)
    } catch {
      // Not JSON after all (YAML flow style): the YAML parser decides below.
    }
  }
  try {
    return parseYaml(text)
  } catch (e) {
    throw new Refused(badRequest(`error decoding YAML: ${e instanceof Error ? e.message : String(e)}`))
  }
}

export const decodeObjectBody = (req: IncomingMessage, body: Buffer): KubeObject => {
  const type = mediaType(req)
  const text = body.toString("utf8")
  if (type === "" || type === "application/json" || type === "*/*") return parseJson(text) as KubeObject
  if (type === "application/yaml") return parseYamlOrJson(text) as KubeObject
  throw new Refused(
    unsupportedMediaType(["application/json", "application/yaml", "application/vnd.kubernetes.protobuf"])
  )
}

/**
 * A body's `apiVersion` and `kind`, when it names them, checked as the create handler
 * checks them against the type its path takes (the kinds these paths take are all in
 * the server's legacy scheme).
 */
export const checkBodyType = (
  expected: { readonly apiVersion: string; readonly kind: string },
  apiVersion: unknown,
  kind: unknown
): void => {
  if (typeof apiVersion === "string" && apiVersion !== "" && apiVersion !== expected.apiVersion) {
    throw new Refused(
      badRequest(
        `the API version in the data (${apiVersion}) does not match the expected API version (${expected.apiVersion})`
      )
    )
  }
  if (typeof kind === "string" && kind !== "" && kind !== expected.kind) {
    throw new Refused(
      badRequest(
        `no kind "${kind}" is registered for version "${expected.apiVersion}" in scheme "pkg/api/legacyscheme/scheme.go:30"`
      )
    )
  }
}

export const dryRunOf = (query: URLSearchParams, optionsKind: string): boolean => {
  const values = query.getAll("dryRun")
  values.forEach((v, i) => {
    if (v !== "All") {
      throw new Refused(
        invalidOptions(
          optionsKind,
          `dryRun[${i}]`,
          "FieldValueNotSupported",
          `Unsupported value: "${v}": supported values: "All"`
        )
      )
    }
  })
  return values.length > 0
}

const userAgentManager = (req: IncomingMessage): string => {
  const agent = req.headers["user-agent"] ?? ""
  const prefix = agent.split("/")[0]!.slice(0, 128)
  return prefix === "" ? "unknown" : prefix
}

export const fieldManagerOf = (req: IncomingMessage, query: URLSearchParams): string =>
  query.get("fieldManager") ?? userAgentManager(req)

export const boolParam = (query: URLSearchParams, name: string): boolean | undefined => {
  const value = query.get(name)
  if (value === null) return undefined
  if (value === "true" || value === "1") return true
  if (value === "false" || value === "0" || value === "") return false
  throw new Refused(badRequest(`invalid value for ${name}: ${value}`))
}

export const objectReply = (code: number, object: unknown): Reply => json(code, object)

export const orStatus = <A>(effect: Effect.Effect<A, Status>, ok: (a: A) => Reply): Effect.Effect<Reply> =>
  Effect.match(effect, { onFailure: (status) => statusReply(status), onSuccess: ok })

/**
 * Bytes leave only while the server answers: a paused one holds them back (the
 * connection stays up), and a stopped one has lost the connection.
 */
export const makeWhenAnswering =
  (faults: Faults) => (res: ServerResponse, effect: Effect.Effect<void>): Effect.Effect<void> =>
    Effect.flatMap(
      faults.server.awaitAnswering,
      (state) => state === "running" ? effect : Effect.zipRight(Effect.sync(() => res.destroy()), Effect.interrupt)
    )

export const send = (res: ServerResponse, reply: Reply) => {
  if (res.headersSent || res.destroyed) return
  const body = typeof reply.body === "string" ? Buffer.from(reply.body, "utf8") : Buffer.from(reply.body)
  res.writeHead(reply.code, {
    "content-type": reply.contentType,
    "content-length": String(body.length),
    "cache-control": "no-cache, private",
    "audit-id": randomUUID(),
    ...reply.headers
  })
  res.end(body)
}
