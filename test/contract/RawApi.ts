/**
 * The API as the contract tests speak to it: plain HTTP(S) requests from a kubeconfig
 * (its server, CA and credentials), answered with the status code, the headers and the
 * body as the server sent them. No library in between: what is compared is the wire.
 */
import { Duration, Effect, type Scope, Stream } from "effect"
import { readFile } from "node:fs/promises"
import { type IncomingMessage, request as httpRequest, type RequestOptions } from "node:http"
import { request as httpsRequest } from "node:https"
import { parse } from "yaml"

/** One answer: its status, headers and body (parsed when it is JSON). */
export interface Answer {
  readonly status: number
  readonly headers: IncomingMessage["headers"]
  readonly text: string
  readonly body: any
}

/** A watch event as the server streams it, one JSON object per line. */
export interface WatchEvent {
  readonly type: "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR"
  readonly object: any
}

export interface RawApi {
  readonly server: string
  /** Sends one request; any answer succeeds, with what the server said. */
  readonly call: (
    method: string,
    path: string,
    body?: unknown,
    contentType?: string
  ) => Effect.Effect<Answer>
  /**
   * Opens a watch at `path` (its query included) for the scope: the events as they come,
   * until the server closes the stream (the stream then ends) or the scope closes.
   */
  readonly watch: (path: string) => Effect.Effect<Stream.Stream<WatchEvent, Error>, Error, Scope.Scope>
}

/** How long one call may take before the test fails: far more than any of these servers needs. */
const CALL_LIMIT = Duration.seconds(30)

interface Credentials {
  readonly ca?: Buffer
  readonly cert?: Buffer
  readonly key?: Buffer
  readonly token?: string
}

/** The server and credentials of a kubeconfig's current context. */
const fromKubeconfig = async (path: string): Promise<{ server: string; credentials: Credentials }> => {
  const config = parse(await readFile(path, "utf8"))
  const contextName = config["current-context"]
  const context = (config.contexts ?? []).find((c: any) => c.name === contextName)?.context ??
    config.contexts?.[0]?.context
  const cluster = (config.clusters ?? []).find((c: any) => c.name === context?.cluster)?.cluster ??
    config.clusters[0].cluster
  const user = (config.users ?? []).find((u: any) => u.name === context?.user)?.user ?? config.users?.[0]?.user ?? {}
  const data = (field: unknown) => (typeof field === "string" ? { value: Buffer.from(field, "base64") } : undefined)
  const ca = data(cluster["certificate-authority-data"])
  const cert = data(user["client-certificate-data"])
  const key = data(user["client-key-data"])
  return {
    server: String(cluster.server).replace(/\/$/, ""),
    credentials: {
      ...(ca !== undefined ? { ca: ca.value } : {}),
      ...(cert !== undefined ? { cert: cert.value } : {}),
      ...(key !== undefined ? { key: key.value } : {}),
      ...(user.token !== undefined ? { token: String(user.token) } : {})
    }
  }
}

const send = (
  server: string,
  credentials: Credentials,
  method: string,
  path: string,
  headers: Record<string, string>,
  onResponse: (res: IncomingMessage) => void,
  onError: (error: Error) => void,
  body?: string
) => {
  const url = new URL(path, server)
  const options: RequestOptions & { ca?: Buffer; cert?: Buffer; key?: Buffer } = {
    method,
    headers: {
      accept: "application/json",
      ...(credentials.token !== undefined ? { authorization: `Bearer ${credentials.token}` } : {}),
      ...headers
    },
    ...(credentials.ca !== undefined ? { ca: credentials.ca } : {}),
    ...(credentials.cert !== undefined ? { cert: credentials.cert } : {}),
    ...(credentials.key !== undefined ? { key: credentials.key } : {})
  }
  const req = (url.protocol === "https:" ? httpsRequest : httpRequest)(url, options, onResponse)
  req.on("error", onError)
  req.end(body)
  return req
}

/** A client for the kubeconfig at `path`, or for its server with `token` as the credential. */
export const rawApi = (path: string, token?: string): Effect.Effect<RawApi> =>
  Effect.promise(() => fromKubeconfig(path)).pipe(
    Effect.map(({ credentials: fromFile, server }) => {
      const credentials: Credentials = token === undefined
        ? fromFile
        : { ...(fromFile.ca !== undefined ? { ca: fromFile.ca } : {}), token }
      const call: RawApi["call"] = (method, path, body, contentType) =>
        Effect.async<Answer>((resume) => {
          const text = body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body)
          const req = send(
            server,
            credentials,
            method,
            path,
            text === undefined ? {} : { "content-type": contentType ?? "application/json" },
            (res) => {
              const chunks: Array<Buffer> = []
              res.on("data", (chunk: Buffer) => chunks.push(chunk))
              res.on("end", () => {
                const raw = Buffer.concat(chunks).toString("utf8")
                let parsed: unknown = undefined
                try {
                  parsed = raw === "" ? undefined : JSON.parse(raw)
                } catch {
                  parsed = undefined
                }
                resume(Effect.succeed({ status: res.statusCode ?? 0, headers: res.headers, text: raw, body: parsed }))
              })
            },
            (error) => resume(Effect.die(error)),
            text
          )
          return Effect.sync(() => req.destroy())
        }).pipe(
          Effect.timeoutFail({
            duration: CALL_LIMIT,
            onTimeout: () => new Error(`${method} ${path}: no answer within ${Duration.format(CALL_LIMIT)}`)
          }),
          Effect.orDie
        )
      const watch: RawApi["watch"] = (path) =>
        Effect.acquireRelease(
          Effect.async<{ readonly res: IncomingMessage; readonly req: ReturnType<typeof send> }, Error>((resume) => {
            const req = send(
              server,
              credentials,
              "GET",
              path,
              {},
              (res) => resume(Effect.succeed({ res, req })),
              (error) => resume(Effect.fail(error))
            )
            return Effect.sync(() => req.destroy())
          }),
          ({ req }) => Effect.sync(() => req.destroy())
        ).pipe(
          Effect.flatMap(({ res }) =>
            (res.statusCode ?? 0) !== 200
              ? Effect.fail(new Error(`watch ${path} answered ${res.statusCode}`))
              : Effect.succeed(
                Stream.fromAsyncIterable(lines(res), (error) => error as Error).pipe(
                  Stream.map((line) => JSON.parse(line) as WatchEvent)
                )
              )
          )
        )
      return { server, call, watch }
    })
  )

/** The lines of a streamed body, as they arrive. */
async function* lines(res: IncomingMessage): AsyncGenerator<string> {
  let buffered = ""
  for await (const chunk of res) {
    buffered += (chunk as Buffer).toString("utf8")
    let newline = buffered.indexOf("\n")
    while (newline >= 0) {
      const line = buffered.slice(0, newline).trim()
      buffered = buffered.slice(newline + 1)
      if (line !== "") yield line
      newline = buffered.indexOf("\n")
    }
  }
  if (buffered.trim() !== "") yield buffered.trim()
}

/**
 * A failure's Status as kube-apiserver writes it; without `message`, the rest of it, for
 * a test that compares a message with generated parts apart.
 */
export const failureStatus = (code: number, reason: string, message?: string, details?: object) => ({
  kind: "Status",
  apiVersion: "v1",
  metadata: {},
  status: "Failure",
  ...(message !== undefined ? { message } : {}),
  reason,
  ...(details !== undefined ? { details } : {}),
  code
})
